package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
)

// The tuned tables of docs/results-tuned.md are what -aggregate makes of
// the committed result files: for every sweep under docs/results, a copy
// of its plan and result files is aggregated here, and once every cell of
// the sweep has finished the page must hold its summary exactly. A sweep
// still running (scripts/tuned-sweep --commit commits each cell as it
// finishes) is skipped, so that main stays green between its cells.
func TestResultsShowTunedTables(t *testing.T) {
	readme, err := os.ReadFile("../../../../docs/results-tuned.md")
	if err != nil {
		t.Fatal(err)
	}
	plans, err := filepath.Glob("../../../../docs/results/tuned-*/" + PlanFile)
	if err != nil {
		t.Fatal(err)
	}
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	for _, plan := range plans {
		src := filepath.Dir(plan)
		out := t.TempDir()
		copyResults(t, src, out)
		err := Aggregate(out, &bytes.Buffer{})
		if errors.Is(err, ErrMissing) {
			continue // cells still to run
		}
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		summary, err := os.ReadFile(filepath.Join(out, study.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(readme, summary) {
			t.Errorf("docs/results-tuned.md does not show the table of %s as compare -aggregate makes it:\n%s", src, summary)
		}
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// copyResults copies what a repository keeps of a sweep in src, the plan
// and the run directories' result files, to dst.
func copyResults(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (d.Name() != PlanFile && d.Name() != ResultFile) {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
