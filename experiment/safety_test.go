package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/internal/testenv"
	"github.com/mtsgd/mtsgd/metrics"
)

// An interruption whose save of last/ fails is not reported as saved:
// Train returns ErrUnsaved, not ErrInterrupted, saying why and which
// checkpoint is the last good one. The runs are interrupted after the
// first step of their second epoch (or, without a checkpoint yet, of
// their first), when the write is made to fail.
func TestInterruptedSaveFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		epoch int // in which the interruption comes (0-based)
		fail  func(t *testing.T, out string)
		want  []string // in the error
	}{
		// 384 KiB: below the parameters file (3 LeNets, 766 KB). The
		// limit holds for the whole process, so this case runs in a
		// child process of its own (testenv.InChild).
		{"disk full", 1, func(t *testing.T, _ string) { limitFileSize(t, 384<<10) },
			[]string{"file too large", "the last good checkpoint is OUT/last (epoch 1, batch 0, step 3)"}},
		{"last/ not a directory", 1, replaceByFile("last"),
			[]string{"not a directory", "the last good checkpoint is OUT/best (epoch 1, batch 0, step 3)"}},
		{"no checkpoint yet", 0, replaceByFile("last"),
			[]string{"not a directory", "OUT holds no good checkpoint"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "disk full" && !testenv.InChild(t) {
				return
			}
			out := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := newRun(t, testSettings(2), out)
			r.Hooks.Step = func(epoch, batch int, _ []float64) {
				if epoch == tc.epoch && batch == 1 {
					tc.fail(t, out)
					cancel()
				}
			}
			err := r.Train(ctx)
			if !errors.Is(err, ErrUnsaved) || errors.Is(err, ErrInterrupted) {
				t.Fatalf("error %v, want ErrUnsaved and not ErrInterrupted", err)
			}
			msg := strings.ReplaceAll(err.Error(), out, "OUT")
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
		})
	}
}

// replaceByFile puts a plain file where the checkpoint directory name
// is, so that saving it fails, whoever runs the test.
func replaceByFile(name string) func(*testing.T, string) {
	return func(t *testing.T, out string) {
		t.Helper()
		path := filepath.Join(out, name)
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("in the way\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A failed save of best/ is reported, and its epoch is not recorded as
// best/'s: after the cause is removed, resuming writes best/, which
// loads.
func TestFailedBestSaveIsRetried(t *testing.T) {
	out := t.TempDir()
	replaceByFile("best")(t, out)
	err := newRun(t, testSettings(1), out).Train(context.Background())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(out, "best")) {
		t.Fatalf("error %v, want one naming %s", err, filepath.Join(out, "best"))
	}
	if c, err := checkpoints.Load(filepath.Join(out, "last")); err != nil || c.Epoch != 1 {
		t.Fatalf("last/ after the failed best/: %v", err)
	}

	if err := os.Remove(filepath.Join(out, "best")); err != nil {
		t.Fatal(err)
	}
	if err := resume(t, out, 1).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := checkpoints.Load(filepath.Join(out, "best"))
	if err != nil {
		t.Fatalf("best/ after resuming: %v", err)
	}
	var state runState
	if err := json.Unmarshal(c.Metrics, &state); err != nil {
		t.Fatal(err)
	}
	if c.Epoch != 1 || state.BestEpoch == nil || *state.BestEpoch != 1 {
		t.Errorf("best/ holds epoch %d, records best epoch %v; want 1, 1", c.Epoch, state.BestEpoch)
	}
}

// improves compares with the epoch best/ holds, or, for a checkpoint that
// does not record it (bestEpoch -1), with every epoch of the history.
func TestImproves(t *testing.T) {
	line := func(epoch int, acc float64) MetricsLine {
		l := MetricsLine{Epoch: epoch, Split: "valid", Task: "a"}
		l.Classification = &metrics.Classification{Accuracy: acc}
		return l
	}
	history := []MetricsLine{line(1, 0.5), line(2, 0.7)}
	for _, tc := range []struct {
		bestEpoch int
		acc       float64
		want      bool
	}{
		{-1, 0.6, false}, {-1, 0.8, true},
		{0, 0.1, true},
		{1, 0.6, true}, {1, 0.5, false},
		{2, 0.6, false}, {2, 0.71, true},
	} {
		r := &Run{Best: "accuracy", epoch: 2, history: history, bestEpoch: tc.bestEpoch, ValidSet: testenv.Images("valid", 40, 1)}
		if got := r.improves([]MetricsLine{line(3, tc.acc)}); got != tc.want {
			t.Errorf("best epoch %d, accuracy %v: improves %v, want %v", tc.bestEpoch, tc.acc, got, tc.want)
		}
	}
}

// best/ is never chosen on the test split: with a validation split the
// choice stays where it was when the test figures are edited to prefer
// another epoch; without one, every epoch improves (best/ is the last),
// whatever the test figures say.
func TestSelectionNeverReadsTest(t *testing.T) {
	line := func(epoch int, split string, acc float64) MetricsLine {
		l := MetricsLine{Epoch: epoch, Split: split, Task: "a"}
		l.Classification = &metrics.Classification{Accuracy: acc}
		return l
	}
	history := []MetricsLine{line(1, "valid", 0.6), line(1, "test", 0.9)}
	for _, testAcc := range []float64{0.1, 0.5, 0.99} {
		next := []MetricsLine{line(2, "valid", 0.7), line(2, "test", testAcc)}
		r := &Run{Best: "accuracy", epoch: 1, history: history, bestEpoch: 1, ValidSet: testenv.Images("valid", 40, 1)}
		if !r.improves(next) {
			t.Errorf("test accuracy %v decided against the better validation epoch", testAcc)
		}
		r.ValidSet = nil
		worse := []MetricsLine{line(2, "test", testAcc)}
		if !r.improves(worse) {
			t.Errorf("without a validation split, test accuracy %v kept best/ from the last epoch", testAcc)
		}
	}
	r := &Run{Best: "accuracy"}
	if got := r.Selection(); !strings.Contains(got, "last epoch") {
		t.Errorf("Selection without a validation split = %q", got)
	}
	r.ValidSet = testenv.Images("valid", 12, 1)
	if w := r.SelectionWarning(); !strings.Contains(w, "12 examples") || !strings.Contains(w, "-valid") {
		t.Errorf("SelectionWarning with 12 examples = %q", w)
	}
}

// A regression task counts by −½·log(MSE) (except under mse): unit-free,
// so targets in thousands cannot outweigh a classification task. Here
// the accuracy rises by 0.4 while the MSE worsens by 5 % (by 5e4 in its
// units): the epoch improves, by 0.4 − ½·log 1.05 over two tasks.
func TestSelectionUnitFree(t *testing.T) {
	acc := func(epoch int, a float64) MetricsLine {
		l := MetricsLine{Epoch: epoch, Split: "valid", Task: "species"}
		l.Classification = &metrics.Classification{Accuracy: a}
		return l
	}
	mse := func(epoch int, m float64) MetricsLine {
		l := MetricsLine{Epoch: epoch, Split: "valid", Task: "mass"}
		l.Regression = &metrics.Regression{MSE: m}
		return l
	}
	for _, scale := range []float64{1e-6, 1, 1e6} {
		r := &Run{Best: "accuracy", epoch: 1, history: []MetricsLine{acc(1, 0.5), mse(1, scale)}, bestEpoch: 1, ValidSet: testenv.Images("valid", 40, 1)}
		next := []MetricsLine{acc(2, 0.9), mse(2, 1.05*scale)}
		got := r.selection(next) - r.selection(r.history)
		// Reference: (0.4 − ½·ln 1.05)/2 by hand.
		if want := (0.4 - 0.5*math.Log(1.05)) / 2; math.Abs(got-want) > 1e-12 {
			t.Errorf("MSE scale %g: selection gain %v, want %v", scale, got, want)
		}
		if !r.improves(next) {
			t.Errorf("MSE scale %g: the epoch does not improve", scale)
		}
		r.Best = "mse"
		if r.improves(next) {
			t.Errorf("MSE scale %g: under mse a worse MSE improves", scale)
		}
	}
}

// A checkpoint written before the best epoch was recorded restores with
// it unknown (today's rule: the history's best); one outside the run's
// epochs is refused.
func TestRestoreBestEpoch(t *testing.T) {
	out := t.TempDir()
	if err := newRun(t, testSettings(1), out).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(c.Metrics, &state); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		best    any // nil: absent
		want    int
		wantErr string
	}{
		{nil, -1, ""}, {0, 0, ""}, {1, 1, ""}, {2, 0, "best epoch 2 outside 0..1"}, {-1, 0, "best epoch -1 outside 0..1"},
	} {
		delete(state, "best_epoch")
		if tc.best != nil {
			state["best_epoch"] = tc.best
		}
		if c.Metrics, err = json.Marshal(state); err != nil {
			t.Fatal(err)
		}
		r, err := Restore(c, Data{Train: train, Test: test}, 1)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("best_epoch %v: error %v, want %q", tc.best, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("best_epoch %v: %v", tc.best, err)
		case r.bestEpoch != tc.want:
			t.Errorf("best_epoch %v: restored %d", tc.best, r.bestEpoch)
		}
	}
}

// Check rejects every non-finite float flag and names it; NaN passes the
// range comparisons and Inf passes "positive", so each needs its own test.
func TestCheckRejectsNonFiniteFloats(t *testing.T) {
	base := Defaults("multi-mnist")
	if err := base.Check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	auto := base
	auto.Repulsion, auto.HeadRepulsion = AutoRepulsion, AutoRepulsion
	if err := auto.Check(); err != nil {
		t.Fatalf("auto repulsion: %v", err)
	}
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		flag string
		set  func(*Settings)
	}{
		{"-lr", func(s *Settings) { s.LR = inf }},
		{"-kernel-scale", func(s *Settings) { s.KernelScale = inf }},
		{"-lr-gamma", func(s *Settings) { s.Gamma = inf }},
		{"-momentum", func(s *Settings) { s.Optimizer = OptimizerSGD; s.Momentum = nan }},
		{"-repulsion", func(s *Settings) { s.Repulsion = nan }},
		{"-head-repulsion", func(s *Settings) { s.HeadRepulsion = nan }},
		{"-repulsion", func(s *Settings) { s.Repulsion = inf }},
	} {
		s := base
		tc.set(&s)
		err := s.Check()
		if err == nil || !strings.Contains(err.Error(), tc.flag+" ") {
			t.Errorf("%s non-finite: got %v, want an error naming %s", tc.flag, err, tc.flag)
		}
	}
}

// A failure to write metrics.jsonl is reported, but the epoch's
// checkpoint is saved first: last/ loads at the end of the epoch.
func TestMetricsFailureKeepsCheckpoint(t *testing.T) {
	out := t.TempDir()
	r := newRun(t, testSettings(1), out)
	r.Hooks.Step = func(epoch, batch int, _ []float64) {
		if epoch == 0 && batch == 1 {
			// A non-empty directory cannot be replaced by the file.
			if err := os.MkdirAll(filepath.Join(out, "metrics.jsonl", "in-the-way"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := r.Train(context.Background())
	if err == nil || !strings.Contains(err.Error(), "metrics.jsonl") {
		t.Fatalf("error %v, want one naming metrics.jsonl", err)
	}
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatalf("last/ after a failed metrics write: %v", err)
	}
	if c.Epoch != 1 || c.Batch != 0 {
		t.Errorf("last/ at epoch %d batch %d, want 1, 0", c.Epoch, c.Batch)
	}
}

// With SaveEvery longer than the run, last/ and best/ are written once
// each, at the end, and hold exactly what a run saving every epoch
// writes: the same epoch, the same recorded best epoch and the same
// values, the best epoch's kept in memory until then.
func TestSaveEveryKeepsBest(t *testing.T) {
	valid := newImages("valid", 24, 5)
	run := func(every time.Duration) (string, map[string]int) {
		out := t.TempDir()
		s := testSettings(6)
		s.LR = 0.2 // a rate at which the validation figures go up and down
		r, err := New(s, Data{Train: train, Valid: valid, Test: test}, 2)
		if err != nil {
			t.Fatal(err)
		}
		r.Out, r.SaveEvery = out, every
		saves := map[string]int{}
		r.Hooks.Saved = func(dir string) { saves[filepath.Base(dir)]++ }
		if err := r.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out, saves
	}
	each, _ := run(0)
	once, saves := run(time.Hour)
	if saves["last"] != 1 || saves["best"] > 1 {
		t.Errorf("saves with SaveEvery 1h: %v, want last/ once and best/ at most once", saves)
	}
	for _, name := range []string{"last", "best"} {
		a, err := checkpoints.Load(filepath.Join(each, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := checkpoints.Load(filepath.Join(once, name))
		if err != nil {
			t.Fatal(err)
		}
		var sa, sb runState
		if err := errors.Join(json.Unmarshal(a.Metrics, &sa), json.Unmarshal(b.Metrics, &sb)); err != nil {
			t.Fatal(err)
		}
		if a.Epoch != b.Epoch || *sa.BestEpoch != *sb.BestEpoch || !reflect.DeepEqual(a.Particles, b.Particles) {
			t.Errorf("%s/: epoch %d (best %d) saving every epoch, %d (best %d) saving once, or other values",
				name, a.Epoch, *sa.BestEpoch, b.Epoch, *sb.BestEpoch)
		}
		t.Logf("%s/: epoch %d, best epoch %d", name, a.Epoch, *sa.BestEpoch)
	}
}
