package plan

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/experiment"
)

// tunedSweep is a committed sweep whose every cell has finished: 6
// methods × 3 seeds of 3 epochs, two tasks, a validation split.
const tunedSweep = "../../../../docs/results/tuned-multi-mnist"

// tableFiles are what -aggregate writes into OUT.
var tableFiles = []string{"compare.md", "compare.csv", "compare.png", study.SummaryFile, "search.md", CurvesFile, TimeFile}

// editResult rewrites DIR/result.json in out through edit, which gets
// the file as generic JSON (so that the fields this binary does not
// know survive).
func editResult(t *testing.T, out, dir string, edit func(r map[string]any)) {
	t.Helper()
	path := filepath.Join(out, dir, ResultFile)
	var r map[string]any
	readJSON(t, path, &r)
	edit(r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lines is a result's history as generic JSON.
func lines(r map[string]any) []map[string]any {
	var h []map[string]any
	for _, l := range r["history"].([]any) {
		h = append(h, l.(map[string]any))
	}
	return h
}

// setLines replaces a result's history.
func setLines(r map[string]any, h []map[string]any) {
	var out []any
	for _, l := range h {
		out = append(out, l)
	}
	r["history"] = out
}

// where finds the history line of an epoch, split and task.
func where(h []map[string]any, epoch float64, split, task string) int {
	for i, l := range h {
		if l["epoch"] == epoch && l["split"] == split && l["task"] == task {
			return i
		}
	}
	return -1
}

// -aggregate checks every run's history against its plan before it
// writes a table: a missing, misplaced, extra or out-of-range line, a
// history cut short, a skipped or validation-only run where the tables
// need scores, and a result file with fields or data it does not know
// are refused, naming the cell, and nothing is written. Each case edits
// one result file of a copy of a committed sweep that aggregates
// cleanly as it is (the first case).
func TestAggregateRefusesUntrustedHistory(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	drop := func(epoch float64, split, task string) func(r map[string]any) {
		return func(r map[string]any) {
			h := lines(r)
			i := where(h, epoch, split, task)
			setLines(r, append(h[:i:i], h[i+1:]...))
		}
	}
	set := func(epoch float64, split, task, field string, v any) func(r map[string]any) {
		return func(r map[string]any) {
			h := lines(r)
			h[where(h, epoch, split, task)][field] = v
		}
	}
	for _, tc := range []struct {
		name string
		dir  string
		edit func(r map[string]any)
		want string // in the error; "" for none
	}{
		{"unchanged", "linear-seed1", func(map[string]any) {}, ""},
		{"last test line deleted, seed 2", "linear-seed2", drop(3, "test", "bottom-right"), "cell 49 (linear-seed2)"},
		{"last test line deleted, seed 1", "linear-seed1", drop(3, "test", "bottom-right"), "cell 43 (linear-seed1)"},
		{"middle line deleted", "mgda-seed3", drop(2, "valid", "top-left"), "(mgda-seed3)"},
		{"final cell skipped", "linear-seed1", func(r map[string]any) {
			r["skipped"] = "not tried"
			r["history"] = nil
		}, "cell 43 (linear-seed1)"},
		{"skipped with a history", "linear-seed1", func(r map[string]any) { r["skipped"] = "not tried" }, "skipped run with 12 lines"},
		{"final cell diverged in epoch 2", "single-seed2", func(r map[string]any) {
			r["diverged"] = "NaN"
			setLines(r, lines(r)[:4])
		}, ""},
		{"validation lines only", "linear-seed1", func(r map[string]any) {
			var h []map[string]any
			for _, l := range lines(r) {
				if l["split"] == "valid" {
					h = append(h, l)
				}
			}
			setLines(r, h)
		}, "cell 43 (linear-seed1)"},
		{"test lines only", "linear-seed1", func(r map[string]any) {
			var h []map[string]any
			for _, l := range lines(r) {
				if l["split"] == "test" {
					h = append(h, l)
				}
			}
			setLines(r, h)
		}, "cell 43 (linear-seed1)"},
		{"two lines swapped", "linear-seed2", func(r map[string]any) {
			h := lines(r)
			i, j := where(h, 3, "test", "top-left"), where(h, 3, "test", "bottom-right")
			h[i], h[j] = h[j], h[i]
			setLines(r, h)
		}, "cell 49 (linear-seed2)"},
		{"tasks swapped in every epoch", "linear-seed2", func(r map[string]any) {
			for _, l := range lines(r) {
				l["task"] = map[any]string{"top-left": "bottom-right", "bottom-right": "top-left"}[l["task"]]
			}
		}, "cell 49 (linear-seed2): "},
		{"task renamed", "linear-seed2", func(r map[string]any) {
			for _, l := range lines(r) {
				if l["task"] == "top-left" {
					l["task"] = "top"
				}
			}
		}, "tasks top, bottom-right, cell 0's are top-left, bottom-right"},
		{"history stops at epoch 2 of 3", "linear-seed1", func(r map[string]any) { setLines(r, lines(r)[:8]) }, "stops at epoch 2 of 3"},
		{"history has an epoch 4", "linear-seed1", func(r map[string]any) {
			h := lines(r)
			for _, l := range h[8:] {
				c := map[string]any{}
				for k, v := range l {
					c[k] = v
				}
				c["epoch"] = 4.0
				h = append(h, c)
			}
			setLines(r, h)
		}, "4 epochs of history, the settings train 3"},
		{"accuracy 5", "linear-seed1", set(3, "test", "top-left", "accuracy", 5.0), "accuracy 5 outside [0, 1]"},
		{"ECE -0.1", "linear-seed1", set(1, "valid", "top-left", "ece", -0.1), "ECE -0.1 outside [0, 1]"},
		{"NLL -3", "linear-seed1", set(3, "test", "bottom-right", "nll", -3.0), "NLL -3 outside"},
		{"Brier 3", "linear-seed1", set(3, "test", "bottom-right", "brier", 3.0), "Brier 3 outside [0, 2]"},
		{"a particle's accuracy 2", "linear-seed1", func(r map[string]any) {
			l := lines(r)[11]
			l["particles"].([]any)[0].(map[string]any)["accuracy"] = 2.0
		}, "particle 0: accuracy 2 outside"},
		{"seconds -500", "linear-seed1", set(3, "test", "top-left", "seconds", -500.0), "seconds -500"},
		{"seconds going back", "linear-seed1", set(2, "valid", "top-left", "seconds", 1e6), "seconds 330.98"},
		{"no scores", "linear-seed1", func(r map[string]any) {
			l := lines(r)[10]
			for _, k := range []string{"accuracy", "brier", "ece", "nll", "confidence"} {
				delete(l, k)
			}
		}, "no scores"},
		{"epoch 0 everywhere", "linear-seed1", func(r map[string]any) {
			for _, l := range lines(r) {
				l["epoch"] = 0.0
			}
		}, "cell 43 (linear-seed1)"},
		{"last epoch numbered 0", "linear-seed1", func(r map[string]any) {
			for _, l := range lines(r)[8:] {
				l["epoch"] = 0.0
			}
		}, "cell 43 (linear-seed1)"},
		{"unknown field", "linear-seed1", func(r map[string]any) { r["histroy"] = []any{} }, `unknown field "histroy"`},
		{"search cell line deleted", "search/linear-lr0.01", drop(1, "valid", "bottom-right"), "(search/linear-lr0.01)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			copyResults(t, tunedSweep, out)
			editResult(t, out, tc.dir, tc.edit)
			err := Aggregate(out, &bytes.Buffer{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("aggregate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("aggregate: %v, want an error saying %q", err, tc.want)
			}
			if status := cli.Status(err); status != 1 {
				t.Errorf("status %d, want 1", status)
			}
			for _, f := range tableFiles {
				if _, err := os.Stat(filepath.Join(out, f)); err == nil {
					t.Errorf("%s written", f)
				}
			}
		})
	}
}

// Trailing data after a result or a plan is refused, as is a plan with
// a field it does not have.
func TestAggregateRefusesTrailingData(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	for _, tc := range []struct {
		file   string
		append string
		want   string
	}{
		{"linear-seed1/" + ResultFile, "{}", "more after the JSON value"},
		{"linear-seed1/" + ResultFile, "x", "more after the JSON value"},
		{PlanFile, "{}", "more after the JSON value"},
		{PlanFile, "]", "more after the JSON value"},
	} {
		t.Run(tc.file+tc.append, func(t *testing.T) {
			out := t.TempDir()
			copyResults(t, tunedSweep, out)
			f, err := os.OpenFile(filepath.Join(out, tc.file), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(tc.append); err != nil {
				t.Fatal(err)
			}
			f.Close()
			err = Aggregate(out, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Join(out, tc.file)) {
				t.Fatalf("aggregate: %v, want an error naming %s and saying %q", err, tc.file, tc.want)
			}
		})
	}
}

// A result or plan file that is a link to /dev/zero, a named pipe or a
// file over maxJSONFile is refused at once by name: none is read until
// memory runs out, and none blocks the open.
func TestAggregateRefusesSpecialFiles(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	for _, tc := range []struct {
		file string
		make func(path string) error
		want string
	}{
		{PlanFile, func(p string) error { return os.Symlink("/dev/zero", p) }, "not a regular file but a character device"},
		{"mgda-seed2/" + ResultFile, func(p string) error { return os.Symlink("/dev/zero", p) }, "not a regular file but a character device"},
		{PlanFile, func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file but a named pipe"},
		{"mgda-seed2/" + ResultFile, func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file but a named pipe"},
		{"mgda-seed2/" + ResultFile, func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(maxJSONFile + 1) // sparse: no disk spent
		}, "more than the 67108864 compare reads"},
		{"mgda-seed2/" + ResultFile, func(p string) error { return os.Mkdir(p, 0o755) }, "not a regular file but a directory"},
	} {
		t.Run(tc.file+" "+tc.want, func(t *testing.T) {
			out := t.TempDir()
			copyResults(t, tunedSweep, out)
			path := filepath.Join(out, tc.file)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- Aggregate(out, &bytes.Buffer{}) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("aggregate blocked")
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("refused after %v, want under a second", d)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("aggregate: %v, want an error naming %s and saying %q", err, path, tc.want)
			}
			for _, f := range tableFiles {
				if _, err := os.Stat(filepath.Join(out, f)); err == nil {
					t.Errorf("%s written", f)
				}
			}
		})
	}
}

// Whatever a result file holds (the seeds, in testdata/fuzz, are small
// results of each kind), readResult returns an error or a run
// the tables can be made from: a history whose last epoch has a test
// line per task, figures in range and finite seconds per epoch.
func FuzzReadResult(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ResultFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, ok, err := ReadResult(dir)
		if err != nil || !ok || r.Skipped != "" || len(r.History) == 0 {
			return
		}
		last := LastTest(r.History)
		if len(last) == 0 {
			t.Fatalf("no test lines in the last epoch of a history of %d lines", len(r.History))
		}
		for _, l := range last {
			vs := []float64{l.Seconds / float64(l.Epoch)}
			if l.Regression != nil {
				vs = append(vs, l.MSE)
			} else {
				vs = append(vs, l.Accuracy, l.ECE, l.NLL, l.Brier)
			}
			for _, v := range vs {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < -slack {
					t.Fatalf("line %+v: a figure out of range", l)
				}
			}
		}
		c := study.Comparison{Dataset: "multi-mnist", Methods: []string{"m"}}
		if err := study.WriteComparison(dir, c, map[string][][]experiment.MetricsLine{"m": {last, last}}, "", io.Discard); err != nil {
			t.Fatalf("tables: %v", err)
		}
	})
}

// Whatever plan.json holds, readPlan returns an error or a plan whose
// cells are the ones its flags make.
func FuzzReadPlan(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		out := t.TempDir()
		if err := os.WriteFile(filepath.Join(out, PlanFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Read(out)
		if err != nil {
			return
		}
		if len(p.Cells) == 0 {
			t.Fatalf("a plan of no cells read: %s", b)
		}
	})
}
