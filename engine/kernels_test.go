package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/particles"
)

// kernelTrainer is three float64 LeNet particles on a batch of 4 real
// examples padded to 6, with the step's gradients evaluated.
func kernelTrainer(t *testing.T) *Trainer {
	t.Helper()
	e, err := New(testConfig(6, tensor.Float64), 3, 31, sgd(0.05), 2)
	if err != nil {
		t.Fatal(err)
	}
	b := randomBatch(rand.New(rand.NewPCG(32, 0)), 4, 2)
	if err := e.in.Load(e.cfg, b); err != nil {
		t.Fatal(err)
	}
	if err := e.gradients(1, true, true, false, false); err != nil {
		t.Fatal(err)
	}
	return e
}

// kernelSum is Σ_{a≠m} exp(−‖x − points[a]‖²/(2σ²)).
func kernelSum(x []float64, points [][]float64, m int, sigma float64) float64 {
	s := 0.0
	for a, y := range points {
		if a != m {
			s += math.Exp(-sqDist(x, y) / (2 * sigma * sigma))
		}
	}
	return s
}

func sqDist(x, y []float64) float64 {
	d := 0.0
	for i := range x {
		d += (x[i] - y[i]) * (x[i] - y[i])
	}
	return d
}

// The repulsion the kernels over outputs hand the rules, mapped back to
// the parameters, is −∇_{θ_m} Σ_a κ(f(θ_m), f(θ_a)) with the bandwidth
// held fixed: checked against central differences (h 1e-6) of that sum,
// with f(θ) recomputed by the step graph, for sampled coordinates of a
// trunk (f: the features of the 4 real rows) and of a head (f: its
// outputs). Tolerance |fd − g| ≤ 1e-7 + 1e-4·|g|; ReLU and max-pooling
// kinks are as rare here as in TestGradientsMatchFiniteDifferences.
func TestOutputKernelRepulsionMatchesFiniteDifferences(t *testing.T) {
	e := kernelTrainer(t)
	n, batch := e.in.N, e.cfg.Batch
	if err := e.headKernels(particles.RBF{}); err != nil {
		t.Fatal(err)
	}
	if err := e.trunkKernel(particles.RBF{}); err != nil {
		t.Fatal(err)
	}
	width := len(e.grads[0].Features) / batch
	features := make([][]float64, len(e.Particles))
	outputs := make([][]float64, len(e.Particles))
	for i, g := range e.grads {
		features[i] = slices.Clone(g.Features[:n*width])
		outputs[i] = slices.Clone(g.Outputs[1][:n*10])
	}
	// f(θ) for particle p after one coordinate of its vector v moved by h.
	probe := func(p *Particle, v []float64, l int, h float64, heads bool) []float64 {
		old := v[l]
		v[l] = old + h
		defer func() { v[l] = old }()
		out := NewGrads(e.cfg)
		if err := machineFor(t, e.cfg).gradients(p, e.in, out, true, nil); err != nil {
			t.Fatal(err)
		}
		if heads {
			return out.Outputs[1][:n*10]
		}
		return out.Features[:n*width]
	}
	rng := rand.New(rand.NewPCG(33, 0))
	const h = 1e-6
	for _, c := range []struct {
		name   string
		m      int
		heads  bool
		points [][]float64
		kern   *particles.Kernel
	}{
		{"trunk", 1, false, features, &e.kernels.trunk},
		{"head 1", 2, true, outputs, &e.kernels.heads[1]},
	} {
		p := e.Particles[c.m]
		v := p.Trunk
		if c.heads {
			v = p.Heads[1]
		}
		for range 12 {
			l := rng.IntN(len(v))
			fp := kernelSum(probe(p, v, l, h, c.heads), c.points, c.m, c.kern.Sigma)
			fm := kernelSum(probe(p, v, l, -h, c.heads), c.points, c.m, c.kern.Sigma)
			want := -(fp - fm) / (2 * h)
			got := c.kern.Repulsion[c.m][l]
			if math.Abs(got-want) > 1e-7+1e-4*math.Abs(got) {
				t.Errorf("%s of particle %d, coordinate %d: repulsion %.10g, finite differences %.10g", c.name, c.m, l, got, want)
			}
		}
	}
}

// medianSigma2 is the median heuristic written out: numpy's median of all
// M² squared distances (zero diagonal included) over 2·log(M+1).
func medianSigma2(points [][]float64) float64 {
	var d2 []float64
	for _, x := range points {
		for _, y := range points {
			d2 = append(d2, sqDist(x, y))
		}
	}
	sort.Float64s(d2)
	med := (d2[len(d2)/2] + d2[(len(d2)-1)/2]) / 2
	return med / (2 * math.Log(float64(len(points))+1))
}

// With the kernels over outputs and no repulsion, a step of SVGD on the
// trunks (one target, task 0) and on the heads moves particle m by
// lr·(1/M)·Σ_a κ_am·s_a, with κ the RBF kernel of the features (trunks)
// or of each head's outputs (heads) on the real rows only, bandwidth by
// the median heuristic: all of it recomputed here from the graphs'
// features and outputs. Tolerance 1e-12.
func TestOutputKernelSmoothing(t *testing.T) {
	e := kernelTrainer(t)
	const lr = 0.05
	m, n, batch := len(e.Particles), e.in.N, e.cfg.Batch
	width := len(e.grads[0].Features) / batch
	kernelOf := func(rows func(i int) []float64) [][]float64 {
		var points [][]float64
		for i := range m {
			points = append(points, rows(i))
		}
		s2 := medianSigma2(points)
		k := make([][]float64, m)
		for a := range m {
			for b := range m {
				k[a] = append(k[a], math.Exp(-sqDist(points[a], points[b])/(2*s2)))
			}
		}
		return k
	}
	kTrunk := kernelOf(func(i int) []float64 { return e.grads[i].Features[:n*width] })
	kHead := [][][]float64{
		kernelOf(func(i int) []float64 { return e.grads[i].Outputs[0][:n*10] }),
		kernelOf(func(i int) []float64 { return e.grads[i].Outputs[1][:n*10] }),
	}
	// e.gradients has negated the gradients into scores: θ + lr·φ.
	want := make([][]float64, m)
	wantHeads := [2][][]float64{make([][]float64, m), make([][]float64, m)}
	for i, p := range e.Particles {
		want[i] = slices.Clone(p.Trunk)
		for a := range m {
			for d := range want[i] {
				want[i][d] += lr * kTrunk[a][i] * e.grads[a].Trunk[0][d] / float64(m)
			}
		}
		for j := range 2 {
			wantHeads[j][i] = slices.Clone(p.Heads[j])
			for a := range m {
				for d := range wantHeads[j][i] {
					wantHeads[j][i][d] += lr * kHead[j][a][i] * e.grads[a].Head[j][d] / float64(m)
				}
			}
		}
	}
	trunkRule := &particles.SVGD{Weights: []float64{1, 0}}
	u := Update{Trunk: trunkRule, Head: &particles.SVGD{}, Kernel: KernelOutputs}
	if err := e.moveTrunks(u, 1); err != nil {
		t.Fatal(err)
	}
	if err := e.moveHeads(u, 1); err != nil {
		t.Fatal(err)
	}
	for i, p := range e.Particles {
		for d := range p.Trunk {
			if math.Abs(p.Trunk[d]-want[i][d]) > 1e-12 {
				t.Fatalf("particle %d trunk[%d] = %.15g, want %.15g", i, d, p.Trunk[d], want[i][d])
			}
		}
		for j := range 2 {
			for d := range p.Heads[j] {
				if math.Abs(p.Heads[j][d]-wantHeads[j][i][d]) > 1e-12 {
					t.Fatalf("particle %d head %d [%d] = %.15g, want %.15g", i, j, d, p.Heads[j][d], wantHeads[j][i][d])
				}
			}
		}
	}
}

// Heads first: each head moves by its own score (linear rule), and the
// trunk then follows the mean of its task gradients taken through the
// moved heads, recomputed here on a copy of the particle whose heads were
// moved by hand. The trunk gradients at the old heads give another answer.
// The losses the step reports are those at the old heads. Tolerance 1e-12.
func TestHeadsFirstOrder(t *testing.T) {
	const m, lr = 3, 0.5
	e := newTestTrainer(t, m, 4, lr)
	b := randomBatch(rand.New(rand.NewPCG(34, 0)), 4, 2)
	in := load(t, e.cfg, b)
	want := make([][]float64, m)
	stale := make([][]float64, m)
	var losses [2][]float64 // the losses the step must report: at the old heads
	for i, p := range e.Particles {
		moved := &Particle{Trunk: slices.Clone(p.Trunk), Stats: p.Stats}
		old := [2]grads{gradients(t, p, in, 0), gradients(t, p, in, 1)}
		losses[0], losses[1] = append(losses[0], old[0].loss), append(losses[1], old[1].loss)
		for j := range 2 {
			h := slices.Clone(p.Heads[j])
			for d := range h {
				h[d] -= lr * old[j].head[d]
			}
			moved.Heads = append(moved.Heads, h)
		}
		ga, gb := gradients(t, moved, in, 0), gradients(t, moved, in, 1)
		want[i] = make([]float64, len(p.Trunk))
		stale[i] = make([]float64, len(p.Trunk))
		for d := range want[i] {
			want[i][d] = p.Trunk[d] - lr*(ga.trunk[d]+gb.trunk[d])/2
			stale[i][d] = p.Trunk[d] - lr*(old[0].trunk[d]+old[1].trunk[d])/2
		}
	}
	u := Update{Trunk: &particles.Linear{}, Head: &particles.Linear{}, HeadsFirst: true}
	got, err := e.Step(b, u)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 2 {
		for i := range m {
			if math.Abs(got[j][i]-losses[j][i]) > 1e-12 {
				t.Errorf("task %d particle %d: the step reports loss %.15g, want %.15g (at the old heads)", j, i, got[j][i], losses[j][i])
			}
		}
	}
	differs := false
	for i, p := range e.Particles {
		for d := range p.Trunk {
			if math.Abs(p.Trunk[d]-want[i][d]) > 1e-12 {
				t.Fatalf("particle %d trunk[%d] = %.15g, want %.15g", i, d, p.Trunk[d], want[i][d])
			}
			differs = differs || math.Abs(p.Trunk[d]-stale[i][d]) > 1e-9
		}
	}
	if !differs {
		t.Error("the trunk step through the moved heads equals the one through the old heads: the test cannot tell the orders apart")
	}
}

// A heads-first step with the kernels over outputs maps each trunk's
// repulsion right after that particle's second gradient evaluation, from
// the replayed trunk graph; the same step done in stages maps it with the
// trunk graph that runs its own forward pass. The two must agree (1e-12).
func TestHeadsFirstRepulsionReplays(t *testing.T) {
	b := randomBatch(rand.New(rand.NewPCG(35, 0)), 4, 2)
	newRules := func() Update {
		return Update{
			Trunk: &particles.MTSGD{Repulsion: 0.3, FirstTermOnly: true}, Head: &particles.SVGD{Repulsion: 0.3},
			Kernel: KernelOutputs, HeadsFirst: true,
		}
	}
	a := kernelTrainer(t)
	if _, err := a.Step(b, newRules()); err != nil {
		t.Fatal(err)
	}
	s := kernelTrainer(t)
	if err := s.in.Load(s.cfg, b); err != nil {
		t.Fatal(err)
	}
	u := newRules()
	for _, f := range []func() error{
		func() error { return s.gradients(1, true, true, false, false) },
		func() error { return s.moveHeads(u, 1) },
		func() error { return s.gradients(1, false, true, false, false) },
		func() error { return s.moveTrunks(u, 1) },
	} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range a.Particles {
		for d, v := range a.Particles[i].Trunk {
			if w := s.Particles[i].Trunk[d]; math.Abs(v-w) > 1e-12 {
				t.Fatalf("particle %d trunk[%d]: %.15g in one step, %.15g in stages", i, d, v, w)
			}
		}
	}
}
