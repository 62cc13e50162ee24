package experiment

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/particles"
)

// images is a small synthetic two-task data set (unit tests only): random
// 36×36 pixels, labels a function of the pixels so there is something to
// learn.
type images struct {
	name string
	x    []float32
	y    [][2]float32
}

func newImages(name string, n int, seed uint64) *images {
	rng := rand.New(rand.NewPCG(seed, 0))
	d := &images{name: name, x: make([]float32, n*36*36)}
	for i := range d.x {
		d.x[i] = rng.Float32()
	}
	for i := range n {
		d.y = append(d.y, [2]float32{float32(int(d.x[i*1296]*10) % 10), float32(int(d.x[i*1296+700]*10) % 10)})
	}
	return d
}

func (d *images) Name() string { return d.name }
func (d *images) Tasks() []data.Task {
	return []data.Task{{Name: "a", Kind: data.Classification, Classes: 10}, {Name: "b", Kind: data.Classification, Classes: 10}}
}
func (d *images) InputShape() []int { return []int{1, 36, 36} }
func (d *images) Len() int          { return len(d.y) }
func (d *images) Example(i int, x, y []float32) error {
	copy(x, d.x[i*1296:(i+1)*1296])
	y[0], y[1] = d.y[i][0], d.y[i][1]
	return nil
}

func testSettings(epochs int) Settings {
	return Settings{
		Dataset: "synthetic", Model: "lenet", Method: "mtsgd", Particles: 3, Epochs: epochs, Batch: 16,
		LR: 0.05, Optimizer: OptimizerSGD, Momentum: 0.9, Schedule: ScheduleMultiStep, Milestones: "1", Gamma: 0.5, Every: 1,
		Warmup: 0, KernelScale: 1, Repulsion: 1, HeadRepulsion: 1, Seed: 3, TestLimit: 20, Dtype: DtypeFloat32,
	}
}

var train, test = newImages("train", 40, 1), newImages("test", 24, 2) // 3 steps per epoch, the last one short

func newRun(t *testing.T, s Settings, out string) *Run {
	t.Helper()
	r, err := New(s, Data{Train: train, Test: test}, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = out
	return r
}

func resume(t *testing.T, out string, epochs int) *Run {
	t.Helper()
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restore(c, Data{Train: train, Test: test}, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = out
	r.Settings.Epochs = epochs
	return r
}

// final is what must be identical between two runs: parameters, optimiser
// states, position and every metric but the wall time.
func final(t *testing.T, out string) *checkpoints.Checkpoint {
	t.Helper()
	r := resume(t, out, 0)
	for i := range r.history {
		r.history[i].Seconds = 0
	}
	r.seconds = 0
	c, err := r.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	c.Settings = nil // the resumed run's says epochs 2 where it began with 1
	return c
}

// A run of 2 epochs stopped after the first (and resumed with -epochs 2),
// and one interrupted in the middle of its second epoch, end with exactly
// the parameters, optimiser states and metrics of an uninterrupted run.
//
// Besides MT-SGD and Pareto MTL (whose phase depends on the step), every
// method of package aggregate: their state (task weights, loss
// histories) travels in the checkpoint, and their random draws follow
// the step; one of them also repelled, whose rule passes its inner
// rule's state on.
func TestExactResume(t *testing.T) {
	methods := []string{"mtsgd", "pareto-mtl"}
	for _, m := range Methods() {
		s := testSettings(1)
		s.Method = m.Name
		if trunk, _, err := s.Rules(2, 3); err == nil {
			if _, ok := trunk.(*particles.Aggregated); ok {
				methods = append(methods, m.Name)
			}
		}
	}
	if len(methods) == 2 {
		t.Fatal("no method of package aggregate is registered")
	}
	for _, method := range methods {
		t.Run(method, func(t *testing.T) { exactResume(t, method, false) })
	}
	t.Run("gradnorm repelled", func(t *testing.T) { exactResume(t, "gradnorm", true) })
}

func exactResume(t *testing.T, method string, repel bool) {
	settings := func(epochs int) Settings {
		s := testSettings(epochs)
		s.Method, s.Repel = method, repel
		return s
	}
	whole := t.TempDir()
	if err := newRun(t, settings(2), whole).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := final(t, whole)
	if want.Epoch != 2 || want.Step != 6 || len(want.Metrics) == 0 {
		t.Fatalf("uninterrupted run ended at epoch %d step %d", want.Epoch, want.Step)
	}
	// Every line has each particle's training loss, and their mean is the
	// line's training loss (compared below across resumes too).
	for _, l := range resume(t, whole, 0).history {
		if len(l.ParticleLoss) != settings(2).Particles {
			t.Fatalf("epoch %d %s %s: %d particle losses, want %d", l.Epoch, l.Split, l.Task, len(l.ParticleLoss), settings(2).Particles)
		}
		mean := 0.0
		for _, v := range l.ParticleLoss {
			mean += v / float64(len(l.ParticleLoss))
		}
		if math.Abs(mean-l.Loss) > 1e-12*max(1, l.Loss) {
			t.Errorf("epoch %d %s %s: particle losses %v average %v, the line says %v", l.Epoch, l.Split, l.Task, l.ParticleLoss, mean, l.Loss)
		}
	}

	stopped := t.TempDir()
	if err := newRun(t, settings(1), stopped).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := resume(t, stopped, 2).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := final(t, stopped); !reflect.DeepEqual(got, want) {
		t.Error("stopped after epoch 1 and resumed: final state differs from the uninterrupted run")
	}

	interrupted := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	r := newRun(t, settings(2), interrupted)
	r.Hooks.Step = func(epoch, batch int, _ []float64) {
		if epoch == 1 && batch == 1 {
			cancel() // seen before the next step
		}
	}
	if err := r.Train(ctx); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted run returned %v", err)
	}
	r = resume(t, interrupted, 2)
	if r.epoch != 1 || r.batch != 1 || r.Trainer.Steps != 4 {
		t.Fatalf("resumed at epoch %d batch %d step %d, want 1, 1, 4", r.epoch, r.batch, r.Trainer.Steps)
	}
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := final(t, interrupted); !reflect.DeepEqual(got, want) {
		t.Error("interrupted mid-epoch and resumed: final state differs from the uninterrupted run")
	}
}

// Saving, loading and evaluating gives the figures the run printed for
// that epoch, to the last digit; best/ holds the best epoch by accuracy.
func TestRoundTripAndBest(t *testing.T) {
	out := t.TempDir()
	var printed [][]MetricsLine
	// The test split serves as the validation split too: best/ is
	// chosen on validation scores, which are then the test scores.
	r, err := New(testSettings(3), Data{Train: train, Valid: test, Test: test}, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = out
	r.Hooks.EpochEnd = func(_ int, lines []MetricsLine) { printed = append(printed, lines) }
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"last", "best"} {
		c, err := checkpoints.Load(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		back, err := Restore(c, Data{Train: train, Valid: test, Test: test}, 1)
		if err != nil {
			t.Fatal(err)
		}
		scores, err := back.Trainer.Evaluate(context.Background(), back.TestSet)
		if err != nil {
			t.Fatal(err)
		}
		epoch := c.Epoch - 1
		for j, s := range scores {
			line := printed[epoch][j]
			if !reflect.DeepEqual(s.Ensemble, line.Score) || !reflect.DeepEqual(s.Particles, line.Particles) {
				t.Errorf("%s (epoch %d) task %s: evaluated %+v, printed %+v", name, c.Epoch, s.Task, *s.Ensemble.Classification, *line.Classification)
			}
		}
		if name == "best" {
			acc := func(e int) float64 { return (printed[e][0].Accuracy + printed[e][1].Accuracy) / 2 }
			accs := []float64{acc(0), acc(1), acc(2)}
			if acc(epoch) != slices.Max(accs) || slices.Index(accs, slices.Max(accs)) != epoch {
				t.Errorf("best/ is epoch %d, mean accuracies %v", c.Epoch, accs)
			}
		}
	}
}

// A checkpoint of another model, or with an optimiser state that is not
// one for its parameters, is refused with a clear error.
func TestRestoreRefusesMismatch(t *testing.T) {
	out := t.TempDir()
	if err := newRun(t, testSettings(1), out).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	c.Layout.Trunk[0].Shape = []int{10, 1, 7, 7}
	if _, err := Restore(c, Data{Train: train, Test: test}, 1); err == nil || err.Error() != "checkpoint does not fit the model lenet: the trunk tensor 0 is conv1.weight [10 1 9 9], not conv1.weight [10 1 7 7]" {
		t.Errorf("error %v", err)
	}

	if c, err = checkpoints.Load(filepath.Join(out, "last")); err != nil {
		t.Fatal(err)
	}
	c.Particles[1].HeadOpts[0] = c.Particles[1].HeadOpts[0][1:]
	want := "checkpoint particle 1 head 0 optimizer: sgd: a state of 509 numbers is not the momentum of 510 parameters"
	if _, err := Restore(c, Data{Train: train, Test: test}, 1); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// New resolves AutoRepulsion by the score scale's default for the
// training set actually used (the limit applied): 1/N for mean, 1 for
// sum, the authors' 0.0015 and 0.25 for normalized; given weights stay.
func TestNewResolvesRepulsion(t *testing.T) {
	for _, tc := range []struct {
		scale        ScoreScale
		limit        int
		given        float64
		trunk, heads float64
	}{
		{ScaleMean, 0, AutoRepulsion, 1.0 / 40, 1.0 / 40},
		{ScaleMean, 32, AutoRepulsion, 1.0 / 32, 1.0 / 32},
		{ScaleUnnamed, 0, AutoRepulsion, 1.0 / 40, 1.0 / 40},
		{ScaleSum, 0, AutoRepulsion, 1, 1},
		{ScaleNormalized, 0, AutoRepulsion, 0.0015, 0.25},
		{ScaleNormalized, 0, 0.7, 0.7, 0.7},
	} {
		s := testSettings(1)
		s.ScoreScale, s.TrainLimit, s.Repulsion, s.HeadRepulsion = tc.scale, tc.limit, tc.given, tc.given
		r := newRun(t, s, t.TempDir())
		if r.Settings.Repulsion != tc.trunk || r.Settings.HeadRepulsion != tc.heads {
			t.Errorf("%+v: repulsion %v/%v", tc, r.Settings.Repulsion, r.Settings.HeadRepulsion)
		}
	}
}
