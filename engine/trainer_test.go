package engine

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

func sgd(lr float64) func() optim.Optimizer {
	return func() optim.Optimizer { return &optim.SGD{LR: lr, Momentum: 0.9} }
}

func newTestTrainer(t *testing.T, m, batch int, lr float64) *Trainer {
	t.Helper()
	return newTrainerOf(t, tensor.Float64, m, batch, lr)
}

// newTrainerOf is newTestTrainer with graphs of dtype dt.
func newTrainerOf(t *testing.T, dt tensor.Dtype, m, batch int, lr float64) *Trainer {
	t.Helper()
	e, err := New(testConfig(batch, dt), m, 21, sgd(lr), 2)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func clone2(v [][]float64) [][]float64 {
	out := make([][]float64, len(v))
	for i := range v {
		out[i] = slices.Clone(v[i])
	}
	return out
}

// One ensemble step equals the step computed by hand: gradients from each
// particle's graphs, scores = −gradients, the mtsgd rule on the trunks and
// the svgd rule on each task's heads, then x ← x + lr·φ (the first SGD
// step with momentum is a plain step). Tolerance 1e-12: the same
// arithmetic in another order. Float32 graphs have the step keep their
// trunk scores in float32, which must change nothing. With OpenBLAS the
// step's float32 products differ from the gradients computed here in
// the order of their sums (stepTolerance).
func TestStepEqualsHandComputedStep(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) { testHandComputedStep(t, dt) })
	}
}

func testHandComputedStep(t *testing.T, dt tensor.Dtype) {
	const m, lr = 3, 0.05
	tol := stepTolerance(dt)
	e := newTrainerOf(t, dt, m, 5, lr)
	b := randomBatch(rand.New(rand.NewPCG(22, 0)), 5, 2)
	mtsgd := &particles.MTSGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
	svgd := &particles.SVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}

	in := load(t, e.cfg, b)
	trunks := make([][]float64, m)
	trunkScores := [][][]float64{make([][]float64, m), make([][]float64, m)}
	heads := [][][]float64{make([][]float64, m), make([][]float64, m)}
	headScores := [][][]float64{make([][]float64, m), make([][]float64, m)}
	for i, p := range e.Particles {
		trunks[i] = slices.Clone(p.Trunk)
		for j := range 2 {
			g := gradients(t, p, in, j)
			negate(g.trunk)
			negate(g.head)
			trunkScores[j][i], headScores[j][i] = g.trunk, g.head
			heads[j][i] = slices.Clone(p.Heads[j])
		}
	}
	trunkDir := clone2(trunks)
	if err := mtsgd.Direction(trunkDir, particles.Ensemble{Theta: trunks, Scores: trunkScores}); err != nil {
		t.Fatal(err)
	}
	headDir := [][][]float64{clone2(heads[0]), clone2(heads[1])}
	for j := range 2 {
		if err := svgd.Direction(headDir[j], particles.Ensemble{Theta: heads[j], Scores: [][][]float64{headScores[j]}}); err != nil {
			t.Fatal(err)
		}
	}

	losses, err := e.Step(b, Update{Trunk: mtsgd, Head: svgd})
	if err != nil {
		t.Fatal(err)
	}
	if e.Steps != 1 || len(losses) != 2 || len(losses[0]) != m {
		t.Fatalf("after one step: Steps %d, losses %v", e.Steps, losses)
	}
	if f32 := e.trunkScores.f32 != nil; f32 != (dt == tensor.Float32) {
		t.Errorf("%v graphs: trunk scores in float32 %v", dt, f32)
	}
	for i, p := range e.Particles {
		for d := range p.Trunk {
			if want := trunks[i][d] + lr*trunkDir[i][d]; math.Abs(p.Trunk[d]-want) > tol {
				t.Fatalf("particle %d trunk[%d] = %.15g, by hand %.15g", i, d, p.Trunk[d], want)
			}
		}
		for j := range 2 {
			for d := range p.Heads[j] {
				if want := heads[j][i][d] + lr*headDir[j][i][d]; math.Abs(p.Heads[j][d]-want) > tol {
					t.Fatalf("particle %d head %d [%d] = %.15g, by hand %.15g", i, j, d, p.Heads[j][d], want)
				}
			}
		}
	}
	// The graphs see the new parameters: the loss has changed.
	if g := gradients(t, e.Particles[0], in, 0); g.loss == losses[0][0] {
		t.Error("loss unchanged after the step: parameters not synced into the graphs")
	}
}

// Warm-up: particle i's trunk follows (w_i·s_a + (1−w_i)·s_b)/M with
// w_i = i/(M−1), its heads their own scores.
func TestWarmupStep(t *testing.T) {
	const m, lr = 3, 0.1
	e := newTestTrainer(t, m, 4, lr)
	b := randomBatch(rand.New(rand.NewPCG(23, 0)), 4, 2)
	in := load(t, e.cfg, b)
	before := make([][]float64, m)
	want := make([][]float64, m)
	for i, p := range e.Particles {
		before[i] = slices.Clone(p.Trunk)
		ga, gb := gradients(t, p, in, 0), gradients(t, p, in, 1)
		w := float64(i) / (m - 1)
		want[i] = make([]float64, len(p.Trunk))
		for d := range want[i] {
			want[i][d] = p.Trunk[d] - lr*(w*ga.trunk[d]+(1-w)*gb.trunk[d])/m
		}
	}
	if _, err := e.Step(b, Update{Trunk: particles.Warmup{}, Head: &particles.Linear{}}); err != nil {
		t.Fatal(err)
	}
	for i, p := range e.Particles {
		for d := range p.Trunk {
			if math.Abs(p.Trunk[d]-want[i][d]) > 1e-12 {
				t.Fatalf("particle %d trunk[%d] = %.15g, want %.15g", i, d, p.Trunk[d], want[i][d])
			}
		}
	}
	if w0, w1 := particles.WarmupWeight(0, 1, 2, 0), particles.WarmupWeight(0, 1, 2, 1); w0 != 0.5 || w1 != 0.5 {
		t.Errorf("one particle: weights %v, %v", w0, w1)
	}
}

// A NaN in a particle's parameters stops the step with an error naming the
// step, the particle and the task. The NaN is put in a head bias, which
// reaches every logit of its class. (A NaN weight can stay invisible in
// the loss: gonum's matrix product skips zero inputs, and ReLU features
// are often zero; it then shows in the trunk gradient.)
func TestStepReportsNotFinite(t *testing.T) {
	e := newTestTrainer(t, 2, 4, 0.1)
	e.Particles[1].Heads[1][500] = math.NaN() // head1.bias[0]
	b := randomBatch(rand.New(rand.NewPCG(24, 0)), 4, 2)
	_, err := e.Step(b, Update{Trunk: particles.Warmup{}, Head: &particles.Linear{}})
	var nf *NotFiniteError
	if !errors.As(err, &nf) || nf.Step != 1 || nf.Particle != 1 || nf.Task != "b" || nf.What != "loss" {
		t.Fatalf("error %v", err)
	}
	if err.Error() != "step 1, particle 1, task b: loss is not finite (entry 0); lower the learning rate or the kernel scale" {
		t.Errorf("message %q", err)
	}
}

// memory is a small in-memory data set of random images.
type memory struct {
	b *data.Batch
}

func (d memory) Name() string       { return "memory" }
func (d memory) Tasks() []data.Task { return twoTasks }
func (d memory) InputShape() []int  { return []int{1, 36, 36} }
func (d memory) Len() int           { return d.b.Size() }
func (d memory) Example(i int, x, y []float32) error {
	copy(x, d.b.Inputs[i*36*36:(i+1)*36*36])
	y[0], y[1] = d.b.Targets[0][i], d.b.Targets[1][i]
	return nil
}

// Evaluate over several batches (the last one padded) scores each particle
// as metrics.Classify does on that particle's softmax outputs computed in
// one batch, and the ensemble on their mean.
func TestEvaluate(t *testing.T) {
	const n = 10
	d := memory{randomBatch(rand.New(rand.NewPCG(25, 0)), n, 2)}
	e := newTestTrainer(t, 3, 4, 0.1)
	got, err := e.Evaluate(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	one := testConfig(n, tensor.Float64)
	in := load(t, one, d.b)
	for j := range 2 {
		labels := make([]int, n)
		for i := range labels {
			labels[i] = int(d.b.Targets[j][i])
		}
		var probs [][]float64
		for i, p := range e.Particles {
			// The same parameters in a graph that takes all n at once.
			q, err := NewParticle(one, rand.New(rand.NewPCG(0, 0)))
			if err != nil {
				t.Fatal(err)
			}
			copy(q.Trunk, p.Trunk)
			copy(q.Heads[j], p.Heads[j])
			out, err := predict(t, q, in)
			if err != nil {
				t.Fatal(err)
			}
			pr := make([]float64, n*10)
			metrics.Softmax(pr, out[j], 10)
			probs = append(probs, pr)
			want, _ := metrics.Classify(pr, labels, 10)
			if c := got[j].Particles[i].Classification; math.Abs(c.NLL-want.NLL) > 1e-12 || c.Accuracy != want.Accuracy {
				t.Errorf("task %d particle %d: %+v, want %+v", j, i, *c, want)
			}
		}
		mean := make([]float64, n*10)
		metrics.Mean(mean, probs)
		want, _ := metrics.Classify(mean, labels, 10)
		if c := got[j].Ensemble.Classification; math.Abs(c.NLL-want.NLL) > 1e-12 || math.Abs(c.Brier-want.Brier) > 1e-12 || c.ECE != want.ECE {
			t.Errorf("task %d ensemble: %+v, want %+v", j, *c, want)
		}
	}
}

// The score scales, checked through a step with the linear rule (trunk:
// mean of the task scores; heads: own score), so that the update is the
// scaled scores themselves: ScoreSum multiplies trunk and head scores by
// N; ScoreNormalized divides each task's trunk scores by their L2 norm
// over the particles, coordinate by coordinate, and leaves the heads.
// The reference normalises with its own loops. Tolerance 1e-12 relative
// (stepTolerance with OpenBLAS's float32 products).
// With float32 graphs the trunk scores are held in float32 and scaled as
// the rules read them, in float64: the same numbers as float64 scores
// scaled in place.
func TestScoreScales(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, scale := range []ScoreScale{ScoreMean, ScoreSum, ScoreNormalized} {
			t.Run(dt.String()+"/"+scale.String(), func(t *testing.T) { testScoreScale(t, dt, scale) })
		}
	}
	if _, err := ParseScoreScale("median"); err == nil {
		t.Error("unknown score scale accepted")
	}
}

func testScoreScale(t *testing.T, dt tensor.Dtype, scale ScoreScale) {
	const m, lr, n = 3, 0.01, 7
	e := newTrainerOf(t, dt, m, 4, lr)
	b := randomBatch(rand.New(rand.NewPCG(25, 0)), 4, 2)
	in := load(t, e.cfg, b)
	trunk := make([][][]float64, 2) // [task][particle]
	head := make([][][]float64, 2)
	before := make([]*Particle, m)
	for i, p := range e.Particles {
		before[i] = &Particle{Trunk: slices.Clone(p.Trunk), Heads: clone2(p.Heads)}
		for j := range 2 {
			g := gradients(t, p, in, j)
			negate(g.trunk)
			negate(g.head)
			trunk[j] = append(trunk[j], g.trunk)
			head[j] = append(head[j], g.head)
		}
	}
	switch scale {
	case ScoreSum:
		for j := range 2 {
			for i := range m {
				for d := range trunk[j][i] {
					trunk[j][i][d] *= n
				}
				for d := range head[j][i] {
					head[j][i][d] *= n
				}
			}
		}
	case ScoreNormalized:
		for j := range 2 {
			for d := range trunk[j][0] {
				norm := math.Sqrt(trunk[j][0][d]*trunk[j][0][d] + trunk[j][1][d]*trunk[j][1][d] + trunk[j][2][d]*trunk[j][2][d])
				for i := range m {
					trunk[j][i][d] /= max(norm, 1e-12)
				}
			}
		}
	}
	u := Update{Trunk: &particles.Linear{}, Head: &particles.Linear{}, Scale: scale, Examples: n}
	if _, err := e.Step(b, u); err != nil {
		t.Fatal(err)
	}
	tol := stepTolerance(dt)
	if scale == ScoreNormalized && tol > 1e-12 {
		// Normalising divides by the coordinate's norm over the
		// particles, which is a sum with cancellation where the
		// gradients are near zero: their rounding differences grow by
		// as much (measured 1.1e-8; a wrong formula moves the parameters
		// by lr times a score of order 1).
		tol = 1e-6
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= tol*max(1, math.Abs(want)) }
	for i, p := range e.Particles {
		for d := range p.Trunk {
			want := before[i].Trunk[d] + lr*(trunk[0][i][d]+trunk[1][i][d])/2
			if !near(p.Trunk[d], want) {
				t.Fatalf("particle %d trunk[%d] = %.15g, want %.15g", i, d, p.Trunk[d], want)
			}
		}
		for j := range 2 {
			for d := range p.Heads[j] {
				if want := before[i].Heads[j][d] + lr*head[j][i][d]; !near(p.Heads[j][d], want) {
					t.Fatalf("particle %d head %d [%d] = %.15g, want %.15g", i, j, d, p.Heads[j][d], want)
				}
			}
		}
	}
}

// stepTolerance is how far a step's parameters may be from a reference
// built from each particle's gradients computed alone: 1e-12, the same
// arithmetic in another order, except for float32 graphs with OpenBLAS.
// There the step stacks the first layer's products across the particles
// a worker runs (ops.StackAcross), which OpenBLAS sums in another order
// than each particle's alone: float32 gradients that differ by a few
// rounding units (6e-8 of their size) move the parameters by lr times
// that, 1e-8 with room (measured 2e-11).
func stepTolerance(dt tensor.Dtype) float64 {
	if _, gonumBLAS := blas32.Implementation().(gonum.Implementation); dt == tensor.Float32 && !gonumBLAS {
		return 1e-8
	}
	return 1e-12
}
