// Package ckptfixture holds checkpoints written by an earlier build of
// this project (testdata/) and what they evaluate to, so that the tests
// can show that a checkpoint saved before a change to the code still
// loads, evaluates and resumes after it. The checkpoint format promises
// that much to users with runs on disk; the tests of package checkpoints
// and experiment only round-trip what the current code writes.
//
// The fixtures are tiny runs on a data set and a model of this package's
// own (registered by Register under Dataset and Model): a few particles
// of a one-hidden-layer MLP on synthetic vectors with one classification
// and one regression task, so that both task kinds and their losses are
// covered, trained in float64 so that the recorded figures do not hang
// on float32 rounding. Runs lists them: MT-SGD with Adam, and the
// independent networks of -method single with SGD and momentum, the two
// optimisers' state layouts.
//
// The fixtures are regenerated only when the checkpoint format changes
// on purpose (a new Version in package checkpoints):
//
//	go test ./experiment/ckptfixture -run TestFixtures -update
//
// which retrains every run, rewrites testdata/ and the figures, and must
// be committed together with the code that needed it.
package ckptfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/mlp"
)

// Dataset and Model are the names the fixtures' settings record.
const (
	Dataset = "fixture-vectors"
	Model   = "fixture-mlp"
)

// Inputs is the length of the data set's input vectors; Hidden the
// width of the model's one hidden layer.
const (
	Inputs = 6
	Hidden = 16
)

var registerOnce sync.Once

// Register makes Dataset and Model known to package experiment, as any
// added data set and model are; a checkpoint records only their names.
// It may be called more than once.
func Register() {
	registerOnce.Do(func() {
		experiment.RegisterModel(experiment.Model{Name: Model, New: newModel})
		experiment.RegisterDataset(experiment.Dataset{
			Name: Dataset,
			Load: func(string, experiment.Settings) (experiment.Data, error) {
				return experiment.Data{
					Train: newVectors(Dataset+"/train", 48, 1),
					Valid: newVectors(Dataset+"/valid", 16, 2),
					Test:  newVectors(Dataset+"/test", 24, 3),
				}, nil
			},
			Model: Model,
			Best:  "nll",
		})
	})
}

// newModel is an MLP with one hidden layer of Hidden units.
func newModel(shape []int, tasks []data.Task, _ experiment.Settings) (models.Model, error) {
	if len(shape) != 1 {
		return nil, fmt.Errorf("%s: inputs of shape %v, want a vector", Model, shape)
	}
	out := make([]int, len(tasks))
	for j, t := range tasks {
		var err error
		if out[j], err = engine.Outputs(t); err != nil {
			return nil, err
		}
	}
	return mlp.New(shape[0], []int{Hidden}, out...), nil
}

// vectors is a synthetic data set: Inputs uniform values in [−1, 1) per
// example; task "class" is which third of [−1, 1) the sum of the first
// two falls in (scaled to fit), task "value" a smooth function of the
// last two.
type vectors struct {
	name string
	x    []float32
	y    [][2]float32
}

func newVectors(name string, n int, seed uint64) *vectors {
	rng := rand.New(rand.NewPCG(seed, 0x66697874))
	d := &vectors{name: name, x: make([]float32, n*Inputs)}
	for i := range d.x {
		d.x[i] = float32(2*rng.Float64() - 1)
	}
	for i := range n {
		x := d.x[i*Inputs : (i+1)*Inputs]
		s := (x[0] + x[1]) / 2 // in [−1, 1)
		class := min(2, int((s+1)*1.5))
		value := float32(math.Sin(float64(2*x[4]))) + x[5]*x[5]
		d.y = append(d.y, [2]float32{float32(class), value})
	}
	return d
}

func (d *vectors) Name() string { return d.name }
func (d *vectors) Tasks() []data.Task {
	return []data.Task{
		{Name: "class", Kind: data.Classification, Classes: 3},
		{Name: "value", Kind: data.Regression},
	}
}
func (d *vectors) InputShape() []int { return []int{Inputs} }
func (d *vectors) Len() int          { return len(d.y) }
func (d *vectors) Example(i int, x, y []float32) error {
	if i < 0 || i >= len(d.y) {
		return fmt.Errorf("%s: example %d of %d", d.name, i, len(d.y))
	}
	copy(x, d.x[i*Inputs:(i+1)*Inputs])
	y[0], y[1] = d.y[i][0], d.y[i][1]
	return nil
}

// A Run is one fixture: the settings it trained with, to Settings.Epochs,
// and the epochs a resumed run trains to.
type Run struct {
	Name     string
	Settings experiment.Settings
	// ResumeTo is the epoch count a test resumes the checkpoint to.
	ResumeTo int
}

// Runs are the fixtures, each saved in testdata/NAME/last.
var Runs = []Run{
	{
		Name: "mtsgd-adam",
		Settings: experiment.Settings{
			Dataset: Dataset, Model: Model, Method: "mtsgd", Particles: 3, Epochs: 2, Batch: 16,
			LR: 0.01, Optimizer: experiment.OptimizerAdam, Schedule: experiment.ScheduleConstant, Gamma: 1, Every: 1,
			KernelScale: 1, Repulsion: experiment.AutoRepulsion, HeadRepulsion: experiment.AutoRepulsion,
			Seed: 5, Dtype: experiment.DtypeFloat64,
			Preset: "authors-params", ScoreScale: experiment.ScaleNormalized, UTerms: experiment.UTermsFirst, Warmup: 1, KernelOn: experiment.KernelOnParams, Order: experiment.OrderJoint,
		},
		ResumeTo: 3,
	},
	{
		Name: "single-sgd",
		Settings: experiment.Settings{
			Dataset: Dataset, Model: Model, Method: "single", Particles: 2, Epochs: 2, Batch: 16,
			LR: 0.05, Optimizer: experiment.OptimizerSGD, Momentum: 0.9, Schedule: experiment.ScheduleMultiStep, Milestones: "2", Gamma: 0.5, Every: 1,
			KernelScale: 1, Repulsion: experiment.AutoRepulsion, HeadRepulsion: experiment.AutoRepulsion,
			Seed: 6, Dtype: experiment.DtypeFloat64, ScoreScale: experiment.ScaleMean,
		},
		ResumeTo: 3,
	},
}

// Figures are what a fixture evaluates to, as the generator recorded
// them: the ensemble's and every particle's scores per task (metrics.Score
// as JSON writes it, a map from metric to value).
type Figures struct {
	// Eval is the checkpoint's evaluation on each split, as eval -ckpt
	// -split SPLIT prints it: Eval[split][task].
	Eval map[string][]TaskFigures `json:"eval"`
	// Resumed are the evaluation lines of the last epoch of the run
	// resumed from the checkpoint to Run.ResumeTo epochs, one per split
	// and task, in the order of the run's history.
	Resumed []LineFigures `json:"resumed"`
}

// TaskFigures are one task's scores.
type TaskFigures struct {
	Task      string               `json:"task"`
	Ensemble  map[string]float64   `json:"ensemble"`
	Particles []map[string]float64 `json:"particles"`
}

// LineFigures are one line of a run's history.
type LineFigures struct {
	Epoch int    `json:"epoch"`
	Split string `json:"split"`
	TaskFigures
}

// Splits are the splits a fixture is evaluated on.
var Splits = []string{"valid", "test"}

// FiguresFile is the file under testdata holding every run's Figures by
// run name.
const FiguresFile = "figures.json"

// ScoreFigures converts a score to its figures.
func ScoreFigures(s metrics.Score) (map[string]float64, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding a score: %w", err)
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decoding a score: %w", err)
	}
	return m, nil
}

// Diff lists how got differs from the recorded want, each line starting
// with where. Figures agree to 1e-9, relative to their size where that is
// above 1: the last bits of float64 arithmetic may come out otherwise on
// a BLAS or a processor that fuses multiply-adds.
func Diff(where string, got, want []TaskFigures) []string {
	if len(got) != len(want) {
		return []string{fmt.Sprintf("%s: %d tasks, recorded %d", where, len(got), len(want))}
	}
	var diffs []string
	for j, g := range got {
		w := want[j]
		if g.Task != w.Task || len(g.Particles) != len(w.Particles) {
			diffs = append(diffs, fmt.Sprintf("%s: task %s with %d particles, recorded %s with %d", where, g.Task, len(g.Particles), w.Task, len(w.Particles)))
			continue
		}
		diffs = append(diffs, diffScore(fmt.Sprintf("%s, task %s, ensemble", where, g.Task), g.Ensemble, w.Ensemble)...)
		for i := range g.Particles {
			diffs = append(diffs, diffScore(fmt.Sprintf("%s, task %s, particle %d", where, g.Task, i), g.Particles[i], w.Particles[i])...)
		}
	}
	return diffs
}

func diffScore(where string, got, want map[string]float64) []string {
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		return []string{fmt.Sprintf("%s: metrics %v, recorded %v", where, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))}
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(got)) {
		g, w := got[k], want[k]
		if !(math.Abs(g-w) <= 1e-9*max(1, math.Abs(w))) {
			diffs = append(diffs, fmt.Sprintf("%s: %s %v, recorded %v", where, k, g, w))
		}
	}
	return diffs
}

// ReadFigures reads the recorded figures of every run from dir.
func ReadFigures(dir string) (map[string]Figures, error) {
	b, err := os.ReadFile(filepath.Join(dir, FiguresFile))
	if err != nil {
		return nil, err
	}
	var f map[string]Figures
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", FiguresFile, err)
	}
	return f, nil
}

// Evaluate scores the checkpoint ckpt on split as eval -ckpt does:
// experiment.Open, then the ensemble's evaluation of the split at the
// run's own limits. dataDir is any directory: the fixtures' data set
// reads no files.
func Evaluate(ctx context.Context, ckpt, dataDir, split string) ([]TaskFigures, error) {
	r, _, err := experiment.Open(ckpt, dataDir, 1)
	if err != nil {
		return nil, err
	}
	set, err := r.Split(split, -1)
	if err != nil {
		return nil, err
	}
	scores, err := r.Trainer.Evaluate(ctx, set)
	if err != nil {
		return nil, err
	}
	var figs []TaskFigures
	for _, s := range scores {
		tf := TaskFigures{Task: s.Task}
		if tf.Ensemble, err = ScoreFigures(s.Ensemble); err != nil {
			return nil, err
		}
		for _, p := range s.Particles {
			f, err := ScoreFigures(p)
			if err != nil {
				return nil, err
			}
			tf.Particles = append(tf.Particles, f)
		}
		figs = append(figs, tf)
	}
	return figs, nil
}

// Resume continues the checkpoint ckpt as train -resume does, to epochs
// epochs, writing into out, and returns the evaluation lines of the last
// epoch.
func Resume(ctx context.Context, ckpt, dataDir, out string, epochs int) ([]LineFigures, error) {
	r, _, err := experiment.Open(ckpt, dataDir, 1)
	if err != nil {
		return nil, err
	}
	r.Settings.Epochs, r.Out = epochs, out
	if err := r.Train(ctx); err != nil {
		return nil, err
	}
	var lines []LineFigures
	for _, l := range r.History() {
		if l.Epoch != epochs {
			continue
		}
		lf := LineFigures{Epoch: l.Epoch, Split: l.Split, TaskFigures: TaskFigures{Task: l.Task}}
		if lf.Ensemble, err = ScoreFigures(l.Score); err != nil {
			return nil, err
		}
		for _, p := range l.Particles {
			f, err := ScoreFigures(p)
			if err != nil {
				return nil, err
			}
			lf.Particles = append(lf.Particles, f)
		}
		lines = append(lines, lf)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("the resumed run has no evaluation of epoch %d", epochs)
	}
	return lines, nil
}

// Generate trains every run into dir/NAME (keeping only its last/
// checkpoint), evaluates and resumes it (in a directory under scratch),
// and writes the figures to dir/FiguresFile. It replaces what dir held
// for the runs.
func Generate(ctx context.Context, dir, scratch string) error {
	Register()
	all := map[string]Figures{}
	for _, run := range Runs {
		out := filepath.Join(dir, run.Name)
		if err := os.RemoveAll(out); err != nil {
			return err
		}
		d, _, err := experiment.LoadData(run.Settings, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", run.Name, err)
		}
		r, err := experiment.New(run.Settings, d, 1)
		if err != nil {
			return fmt.Errorf("%s: %w", run.Name, err)
		}
		r.Out = out
		if err := r.Train(ctx); err != nil {
			return fmt.Errorf("%s: %w", run.Name, err)
		}
		// last/ alone is the fixture: best/ is the same format again.
		for _, extra := range []string{"best", "metrics.jsonl", ".lock"} {
			if err := os.RemoveAll(filepath.Join(out, extra)); err != nil {
				return err
			}
		}
		ckpt := filepath.Join(out, "last")
		f := Figures{Eval: map[string][]TaskFigures{}}
		for _, split := range Splits {
			if f.Eval[split], err = Evaluate(ctx, ckpt, dir, split); err != nil {
				return fmt.Errorf("%s: evaluating %s: %w", run.Name, split, err)
			}
		}
		if f.Resumed, err = Resume(ctx, ckpt, dir, filepath.Join(scratch, run.Name), run.ResumeTo); err != nil {
			return fmt.Errorf("%s: resuming: %w", run.Name, err)
		}
		all[run.Name] = f
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FiguresFile), append(b, '\n'), 0o644)
}
