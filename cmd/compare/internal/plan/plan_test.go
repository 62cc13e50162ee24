package plan

import (
	"bytes"
	"os"
	"path/filepath"
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
