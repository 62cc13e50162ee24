package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every committed plan under docs/results reads back (Read checks its
// cells against those New makes of its comparison), and Write writes it
// again byte for byte.
func TestCommittedPlansRoundTrip(t *testing.T) {
	plans, err := filepath.Glob("../../../../docs/results/*/" + PlanFile)
	if err != nil || len(plans) == 0 {
		t.Fatalf("no committed plans: %v", err)
	}
	for _, path := range plans {
		p, err := Read(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		if err := Write(out, New(p.Comparison)); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(out, PlanFile)); !bytes.Equal(got, want) {
			t.Errorf("%s: written again, it differs:\n%s", path, got)
		}
	}
}

// A plan.json cell that is not what the plan's flags make is refused
// naming the cell and the field, with both values, in one short line,
// not the two cells as JSON.
func TestReadNamesDifferingField(t *testing.T) {
	p, err := Read("../../../../docs/results/paper-multi-mnist")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	p.Cells[2].Settings.LR = 0.25
	if err := Write(out, p); err != nil {
		t.Fatal(err)
	}
	_, err = Read(out)
	want := "cell 2 differs from what this compare makes of the plan's flags (another version?) in settings.lr: 0.25 against 0.001 here (run " + p.Cells[2].Dir + ")"
	if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 300 || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %v\nwant %q, one line under 300 bytes", err, want)
	}
}
