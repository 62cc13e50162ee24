package experiment

import (
	"math"
	"slices"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/particles"
)

// A methodCase is what a method's test file (method_<name>_test.go) says of
// it, registered in stepCases by that file's init function: what the
// method declares, and the direction one step takes (direction).
type methodCase struct {
	declares  declared
	direction func(t *testing.T, o *oneStep) (trunk [][]float64, heads [][][]float64)
}

// declared are the flags a Method declares.
type declared struct{ kernels, presets, toy, compared bool }

// stepCases holds every method's case, by name.
var stepCases = map[string]methodCase{}

// stepLR is the step's learning rate: a plain SGD step (momentum's first
// step is plain).
const stepLR = 0.1

// One step of each registered method moves the parameters as its case
// says, from the per-task gradients of the particles' own graphs, within
// 1e-9 (float64 graphs); each method declares what its case says it
// does. A registered method without a case fails: its test file gives it
// one.
func TestOneStepPerMethod(t *testing.T) {
	for _, m := range Methods() {
		t.Run(m.Name, func(t *testing.T) {
			c, ok := stepCases[m.Name]
			if !ok {
				t.Fatalf("method %s has no case: register one in stepCases from its test file", m.Name)
			}
			if got := (declared{m.Kernels, m.Presets, m.Toy, m.Compared}); got != c.declares {
				t.Errorf("declares %+v, want %+v", got, c.declares)
			}
			o := stepOnce(t, m.Name, nil)
			s := testSettings(1)
			s.Method = m.Name
			if m.shared(s) != (len(o.trunks[0]) > 0) {
				t.Errorf("shared trunk %v, of %d parameters", m.shared(s), len(o.trunks[0]))
			}
			trunkDir, headDir := c.direction(t, o)
			o.check(t, trunkDir, headDir)
		})
	}
	for name := range stepCases {
		if _, err := LookupMethod(name); err != nil {
			t.Errorf("a case for %v", err)
		}
	}
}

// oneStep is one step of a method on the test data set's first batch,
// with 2 tasks: the parameters before it, the scores (minus the loss
// gradients) and losses it was taken from, and the particles after it.
type oneStep struct {
	m, k          int
	stepsPerEpoch int
	trunks        [][]float64   // [particle]
	heads         [][][]float64 // [task][particle]
	trunkScores   [][][]float64 // [task][particle]
	headScores    [][][]float64 // [task][particle]
	losses        [][]float64   // [task][particle]
	after         []*engine.Particle
}

// stepOnce takes one step of method on the test data set, with the
// method's parameters params (nil: the defaults).
func stepOnce(t *testing.T, method string, params map[string]float64) *oneStep {
	t.Helper()
	s := testSettings(1)
	s.Method, s.LR, s.Dtype, s.MethodParams = method, stepLR, DtypeFloat64, params
	r, err := New(s, Data{Train: train, Test: test}, 2)
	if err != nil {
		t.Fatal(err)
	}
	batches := data.Epoch(r.TrainSet, s.Batch, true, s.Seed, 0)
	batches.Next()
	b := batches.Batch()
	cfg := r.Trainer.Config()
	in := engine.NewInputs(cfg)
	if err := in.Load(cfg, b); err != nil {
		t.Fatal(err)
	}
	m, k := len(r.Trainer.Particles), 2
	o := &oneStep{m: m, k: k, stepsPerEpoch: batches.Len(), trunks: make([][]float64, m)}
	for range k {
		o.heads = append(o.heads, make([][]float64, m))
		o.trunkScores = append(o.trunkScores, make([][]float64, m))
		o.headScores = append(o.headScores, make([][]float64, m))
		o.losses = append(o.losses, make([]float64, m))
	}
	for i, p := range r.Trainer.Particles {
		o.trunks[i] = slices.Clone(p.Trunk)
		g := engine.NewGrads(cfg)
		if err := r.Trainer.Gradients(i, in, g); err != nil {
			t.Fatal(err)
		}
		for j := range k {
			o.heads[j][i] = slices.Clone(p.Heads[j])
			o.trunkScores[j][i], o.headScores[j][i], o.losses[j][i] = g.Trunk[j], g.Head[j], g.Loss[j]
			for _, v := range [][]float64{o.trunkScores[j][i], o.headScores[j][i]} {
				for d := range v {
					v[d] = -v[d]
				}
			}
		}
	}
	trunkRule, headRule, err := s.Rules(k, batches.Len())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Trainer.Step(b, engine.Update{Trunk: trunkRule, Head: headRule}); err != nil {
		t.Fatal(err)
	}
	o.after = r.Trainer.Particles
	return o
}

// check fails t unless every particle moved by stepLR times the
// directions, within 1e-9.
func (o *oneStep) check(t *testing.T, trunkDir [][]float64, headDir [][][]float64) {
	t.Helper()
	for i, p := range o.after {
		for d := range p.Trunk {
			if want := o.trunks[i][d] + stepLR*trunkDir[i][d]; math.Abs(p.Trunk[d]-want) > 1e-9 {
				t.Fatalf("particle %d trunk[%d] = %.12g, want %.12g", i, d, p.Trunk[d], want)
			}
		}
		for j := range o.k {
			for d := range p.Heads[j] {
				if want := o.heads[j][i][d] + stepLR*headDir[j][i][d]; math.Abs(p.Heads[j][d]-want) > 1e-9 {
					t.Fatalf("particle %d head %d [%d] = %.12g, want %.12g", i, j, d, p.Heads[j][d], want)
				}
			}
		}
	}
}

// trunkMix is the trunk direction of particle i weighted by w(i, j) over
// the tasks' scores.
func (o *oneStep) trunkMix(w func(i, j int) float64) [][]float64 {
	dir := make([][]float64, o.m)
	for i := range o.m {
		dir[i] = make([]float64, len(o.trunks[i]))
		for j := range o.k {
			for d := range dir[i] {
				dir[i][d] += w(i, j) * o.trunkScores[j][i][d]
			}
		}
	}
	return dir
}

// trunkRule is the direction rule gives the trunks from their scores and
// the losses.
func (o *oneStep) trunkRule(t *testing.T, rule particles.Rule) [][]float64 {
	t.Helper()
	dir := make([][]float64, o.m)
	for i := range dir {
		dir[i] = make([]float64, len(o.trunks[i]))
	}
	if err := rule.Direction(dir, particles.Ensemble{Theta: o.trunks, Scores: o.trunkScores, Values: o.losses}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ownHeadScores moves each head along its own task's score.
func (o *oneStep) ownHeadScores() [][][]float64 {
	dir := make([][][]float64, o.k)
	for j := range o.k {
		dir[j] = make([][]float64, o.m)
		for i := range o.m {
			dir[j][i] = slices.Clone(o.headScores[j][i])
		}
	}
	return dir
}

// svgdHeads moves each task's heads by SVGD with the test settings'
// kernel scale and repulsion (1), kernel on that task's heads.
func (o *oneStep) svgdHeads(t *testing.T) [][][]float64 {
	t.Helper()
	dir := o.ownHeadScores()
	svgd := &particles.SVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
	for j := range o.k {
		if err := svgd.Direction(dir[j], particles.Ensemble{Theta: o.heads[j], Scores: [][][]float64{o.headScores[j]}}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
