package ckptfixture_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/experiment/ckptfixture"
)

var update = flag.Bool("update", false, "retrain the fixtures and rewrite testdata/ (only when the checkpoint format changes on purpose)")

const testdata = "testdata"

// The checkpoints in testdata, written by an earlier build, load through
// experiment.Open, evaluate to the figures recorded when they were
// written, save back unchanged (parameters and optimiser states, bit for
// bit), and resume to the recorded figures of the following epoch.
func TestFixtures(t *testing.T) {
	ckptfixture.Register()
	ctx := context.Background()
	if *update {
		if err := ckptfixture.Generate(ctx, testdata, t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	want, err := ckptfixture.ReadFigures(testdata)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range ckptfixture.Runs {
		t.Run(run.Name, func(t *testing.T) {
			ckpt := filepath.Join(testdata, run.Name, "last")
			w, ok := want[run.Name]
			if !ok {
				t.Fatalf("%s records no figures for %s", ckptfixture.FiguresFile, run.Name)
			}
			for _, split := range ckptfixture.Splits {
				got, err := ckptfixture.Evaluate(ctx, ckpt, testdata, split)
				if err != nil {
					t.Fatalf("%s: %v", split, err)
				}
				compareTasks(t, split, got, w.Eval[split])
			}
			saveUnchanged(t, ckpt)
			lines, err := ckptfixture.Resume(ctx, ckpt, testdata, t.TempDir(), run.ResumeTo)
			if err != nil {
				t.Fatalf("resuming: %v", err)
			}
			if len(lines) != len(w.Resumed) {
				t.Fatalf("resumed: %d lines, recorded %d", len(lines), len(w.Resumed))
			}
			for i, l := range lines {
				r := w.Resumed[i]
				if l.Epoch != r.Epoch || l.Split != r.Split {
					t.Errorf("resumed line %d: epoch %d %s, recorded epoch %d %s", i, l.Epoch, l.Split, r.Epoch, r.Split)
				}
				compareTasks(t, fmt.Sprintf("resumed, epoch %d %s", l.Epoch, l.Split), []ckptfixture.TaskFigures{l.TaskFigures}, []ckptfixture.TaskFigures{r.TaskFigures})
			}
		})
	}
}

// saveUnchanged restores the checkpoint in dir and captures the restored
// run's state again: what the run would save is what it loaded, the
// optimisers' states included.
func saveUnchanged(t *testing.T, dir string) {
	t.Helper()
	c, err := checkpoints.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := experiment.Open(dir, testdata, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch != c.Epoch || got.Batch != c.Batch || got.Step != c.Step {
		t.Errorf("saved back at epoch %d batch %d step %d, loaded at %d, %d, %d", got.Epoch, got.Batch, got.Step, c.Epoch, c.Batch, c.Step)
	}
	if err := got.Layout.Equal(c.Layout); err != nil {
		t.Errorf("layout: %v", err)
	}
	if !jsonEqual(got.Settings, c.Settings) {
		t.Errorf("settings saved back as %s, loaded %s", got.Settings, c.Settings)
	}
	if len(got.Particles) != len(c.Particles) {
		t.Fatalf("%d particles saved back, %d loaded", len(got.Particles), len(c.Particles))
	}
	for i, p := range got.Particles {
		q := c.Particles[i]
		for _, v := range []struct {
			what      string
			got, want any
		}{
			{"trunk", p.Trunk, q.Trunk}, {"heads", p.Heads, q.Heads}, {"statistics", p.Stats, q.Stats},
			{"trunk optimiser", p.TrunkOpt, q.TrunkOpt}, {"head optimisers", p.HeadOpts, q.HeadOpts},
		} {
			if !reflect.DeepEqual(v.got, v.want) && !(empty(v.got) && empty(v.want)) {
				t.Errorf("particle %d: %s saved back differs from what was loaded", i, v.what)
			}
		}
	}
}

// empty reports a nil or empty vector: a checkpoint reads an empty
// vector back as either.
func empty(v any) bool {
	s, ok := v.([]float64)
	return ok && len(s) == 0
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func compareTasks(t *testing.T, where string, got, want []ckptfixture.TaskFigures) {
	t.Helper()
	for _, d := range ckptfixture.Diff(where, got, want) {
		t.Error(d)
	}
}
