package plan

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"encoding/json"
)

// A study's committed results with one run's assessment damaged: each
// damage is refused by Aggregate with an error naming the cell and its
// result file, before any table is written; a finished run without an
// assessment is listed as missing, not counted. The damages are those a
// probe of the paper study's files found accepted, each of which changed
// a table or a verdict.
func TestAggregateChecksAssessments(t *testing.T) {
	const src, run = "../../../../docs/results/paper-multi-mnist", "linear-seed1"
	edit := func(f func(a map[string]any)) func(r map[string]any) {
		return func(r map[string]any) { f(r["assessed"].(map[string]any)) }
	}
	task := func(a map[string]any, name string, i int) map[string]any {
		return a[name].(map[string]any)["tasks"].([]any)[i].(map[string]any)
	}
	ood := func(a map[string]any) map[string]any { return a["last"].(map[string]any)["ood"].(map[string]any) }
	for _, c := range []struct {
		name   string
		damage func(r map[string]any)
		want   string
	}{
		{"calibrated ECE negative", edit(func(a map[string]any) { task(a, "last", 0)["calibrated"].(map[string]any)["ece"] = -0.2 }), "ECE -0.2 outside"},
		{"raw accuracy 2", edit(func(a map[string]any) { task(a, "last", 0)["raw"].(map[string]any)["accuracy"] = 2.0 }), "raw scores differ"},
		{"raw accuracy not the history's", edit(func(a map[string]any) { task(a, "best", 1)["raw"].(map[string]any)["accuracy"] = 0.5 }), "raw scores differ"},
		{"tasks reversed", edit(func(a map[string]any) {
			ts := a["last"].(map[string]any)["tasks"].([]any)
			ts[0], ts[1] = ts[1], ts[0]
		}), "task 1 is \"bottom-right\""},
		{"task renamed", edit(func(a map[string]any) { task(a, "last", 1)["task"] = "bottom-left" }), "task 2 is \"bottom-left\""},
		{"last at epoch 50", edit(func(a map[string]any) { a["last"].(map[string]any)["epoch"] = 50 }), "last/ at epoch 50"},
		{"best epoch 200", edit(func(a map[string]any) { a["best_epoch"] = 200 }), "best_epoch 200"},
		{"temperature -1", edit(func(a map[string]any) { a["last"].(map[string]any)["temperatures"].([]any)[0] = -1.0 }), "temperature -1 outside"},
		{"temperature 0", edit(func(a map[string]any) { a["last"].(map[string]any)["temperatures"].([]any)[1] = 0.0 }), "temperature 0 outside"},
		{"temperature 1e6", edit(func(a map[string]any) { a["best"].(map[string]any)["temperatures"].([]any)[0] = 1e6 }), "temperature 1e+06 outside"},
		{"AUROC 2", edit(func(a map[string]any) { ood(a)["auroc_entropy"] = 2.0 }), "entropy AUROC 2 outside"},
		{"AUROC -0.5", edit(func(a map[string]any) { ood(a)["auroc_mutual_information"] = -0.5 }), "mutual information AUROC -0.5 outside"},
		{"no in-distribution examples", edit(func(a map[string]any) { ood(a)["in_examples"] = 0 }), "from 0 and"},
		{"OOD set its own", edit(func(a map[string]any) { ood(a)["dataset"] = "multi-mnist" }), `against "multi-mnist"`},
		{"calibrated accuracy moved", edit(func(a map[string]any) { task(a, "last", 0)["calibrated"].(map[string]any)["accuracy"] = 0.9 }), "calibrated accuracy 0.9"},
		{"no best/", edit(func(a map[string]any) { delete(a, "best") }), "no assessment of best/"},
		{"no OOD", edit(func(a map[string]any) { delete(a["last"].(map[string]any), "ood") }), "no out-of-distribution scores"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := damaged(t, src, run, c.damage)
			err := Aggregate(out, io.Discard)
			if err == nil || errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), run) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, run, c.want)
			}
			if _, err := os.Stat(filepath.Join(out, "study.md")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("study.md written despite the damage (%v)", err)
			}
		})
	}
	t.Run("no assessment", func(t *testing.T) {
		out := damaged(t, src, run, func(r map[string]any) { delete(r, "assessed") })
		if err := Aggregate(out, io.Discard); !errors.Is(err, ErrMissing) {
			t.Fatalf("error %v, want ErrMissing", err)
		}
		b, err := os.ReadFile(filepath.Join(out, "study.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), run+": finished but not assessed") {
			t.Errorf("study.md does not list %s as not assessed", run)
		}
	})
}

// damaged copies the study in src to a temporary directory with run's
// result file changed by damage, and returns the copy.
func damaged(t *testing.T, src, run string, damage func(r map[string]any)) string {
	t.Helper()
	out := t.TempDir()
	copyResults(t, src, out)
	path := filepath.Join(out, run, ResultFile)
	var r map[string]any
	readJSON(t, path, &r)
	damage(r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
