package optim

import (
	"math"
	"strings"
	"testing"
)

// With a constant gradient g, SGD with momentum μ has b_t = g·(1−μᵗ)/(1−μ),
// so after n steps x = x0 − lr·g·Σ_{t=1..n} (1−μᵗ)/(1−μ).
func TestSGDMomentumClosedForm(t *testing.T) {
	const lr, mu, g, n = 0.1, 0.9, 2.0, 25
	o := &SGD{LR: lr, Momentum: mu}
	x := []float64{1}
	want := 1.0
	for step := 1; step <= n; step++ {
		if err := o.Step(x, []float64{g}); err != nil {
			t.Fatal(err)
		}
		want -= lr * g * (1 - math.Pow(mu, float64(step))) / (1 - mu)
		if math.Abs(x[0]-want) > 1e-12 {
			t.Fatalf("step %d: x = %v, closed form %v", step, x[0], want)
		}
	}
}

func TestSGDWithoutMomentum(t *testing.T) {
	o := &SGD{LR: 0.5}
	x := []float64{1, -1}
	if err := o.Step(x, []float64{2, -4}); err != nil {
		t.Fatal(err)
	}
	if x[0] != 0 || x[1] != 1 {
		t.Errorf("x = %v, want [0 1]", x)
	}
}

// With a constant gradient the bias-corrected moments are exact,
// m̂ = g and v̂ = g², so every Adam step moves x by lr·g/(|g| + ε).
func TestAdamConstantGradientClosedForm(t *testing.T) {
	o := NewAdam(0.01)
	grads := []float64{3, -0.5, 1e-3}
	x := []float64{0, 0, 0}
	for step := 1; step <= 50; step++ {
		if err := o.Step(x, grads); err != nil {
			t.Fatal(err)
		}
		for i, g := range grads {
			want := -float64(step) * 0.01 * g / (math.Abs(g) + 1e-8)
			if math.Abs(x[i]-want) > 1e-12 {
				t.Fatalf("step %d coordinate %d: x = %v, closed form %v", step, i, x[i], want)
			}
		}
	}
}

// Both optimisers minimise a convex quadratic f(x) = ½Σ a_i x_i².
func TestOptimizersMinimiseQuadratic(t *testing.T) {
	a := []float64{1, 10, 0.1}
	for name, o := range map[string]Optimizer{
		"sgd":  &SGD{LR: 0.05, Momentum: 0.9},
		"adam": NewAdam(0.05),
	} {
		x := []float64{1, 1, 1}
		g := make([]float64, 3)
		for range 3000 {
			for i := range x {
				g[i] = a[i] * x[i]
			}
			if err := o.Step(x, g); err != nil {
				t.Fatal(err)
			}
		}
		for i := range x {
			if math.Abs(x[i]) > 1e-3 {
				t.Errorf("%s: x = %v, want ≈ 0", name, x)
				break
			}
		}
	}
}

func TestOptimizersRejectLengthMismatch(t *testing.T) {
	for name, o := range map[string]Optimizer{"sgd": &SGD{LR: 1, Momentum: 0.9}, "adam": NewAdam(1)} {
		if err := o.Step(make([]float64, 2), make([]float64, 3)); err == nil {
			t.Errorf("%s: no error for mismatched lengths", name)
		}
		if err := o.Step(make([]float64, 2), make([]float64, 2)); err != nil {
			t.Fatal(err)
		}
		if err := o.Step(make([]float64, 4), make([]float64, 4)); err == nil {
			t.Errorf("%s: no error when the vector length changes", name)
		}
	}
}

// The paper's Multi-MNIST schedule: lr 1e-3 halved at epochs 15, 30, …, 90.
func TestMultiStep(t *testing.T) {
	ms, err := ParseMilestones("15,30,45,60,75,90")
	if err != nil {
		t.Fatal(err)
	}
	s := MultiStep{Base: 1e-3, Milestones: ms, Gamma: 0.5}
	for _, tc := range []struct {
		epoch int
		lr    float64
	}{{0, 1e-3}, {14, 1e-3}, {15, 5e-4}, {29, 5e-4}, {30, 2.5e-4}, {89, 1e-3 / 32}, {90, 1e-3 / 64}, {99, 1e-3 / 64}} {
		if got := s.LR(tc.epoch); math.Abs(got-tc.lr) > 1e-18 {
			t.Errorf("epoch %d: lr %v, want %v", tc.epoch, got, tc.lr)
		}
	}
	for _, bad := range []string{"15,x", "30,15", "0"} {
		if _, err := ParseMilestones(bad); err == nil {
			t.Errorf("milestones %q accepted", bad)
		}
	}
}

// CelebA's schedule in the paper: 5e-4, ×0.85 every 10 epochs.
func TestExponential(t *testing.T) {
	s := Exponential{Base: 5e-4, Gamma: 0.85, Every: 10}
	if s.LR(9) != 5e-4 || math.Abs(s.LR(10)-4.25e-4) > 1e-18 || math.Abs(s.LR(25)-5e-4*0.85*0.85) > 1e-18 {
		t.Errorf("lr at 9, 10, 25: %v %v %v", s.LR(9), s.LR(10), s.LR(25))
	}
	if (Exponential{Base: 1, Gamma: 0.5, Every: 1}).LR(3) != 0.125 || Constant(0.1).LR(50) != 0.1 {
		t.Error("per-epoch decay or constant wrong")
	}
}

// Saving the state after some steps and restoring it into a fresh
// optimiser continues bit for bit as the original (the restored one
// shares no memory with it, or the two would step the same numbers).
func TestStateRoundTrip(t *testing.T) {
	for name, fresh := range map[string]func() Optimizer{
		"sgd":  func() Optimizer { return &SGD{LR: 0.1, Momentum: 0.9} },
		"adam": func() Optimizer { return NewAdam(0.01) },
	} {
		grad := func(step int) []float64 { return []float64{math.Sin(float64(step)), float64(step) - 3, 0.5} }
		a, x := fresh(), []float64{1, 2, 3}
		for s := range 4 {
			a.Step(x, grad(s))
		}
		b, y := fresh(), append([]float64(nil), x...)
		if err := b.SetState(a.State(), len(y)); err != nil {
			t.Fatal(err)
		}
		for s := 4; s < 8; s++ {
			a.Step(x, grad(s))
			b.Step(y, grad(s))
		}
		for i := range x {
			if x[i] != y[i] {
				t.Errorf("%s: x[%d] = %v continued, %v restored", name, i, x[i], y[i])
			}
		}
		if len(fresh().State()) != 0 {
			t.Errorf("%s: a fresh optimiser has state", name)
		}
		// State hands out the optimiser's own numbers, not a copy.
		if st := a.State(); &st[0] != &a.State()[0] {
			t.Errorf("%s: State copies the state", name)
		}
	}
	for _, tc := range []struct {
		o     Optimizer
		state []float64
		n     int
		want  string
	}{
		{NewAdam(0.1), []float64{0.5, 1, 2}, 1, "step count 0.5 is not a positive whole number"},
		{NewAdam(0.1), []float64{math.NaN(), 1, 2}, 1, "step count NaN is not a positive whole number"},
		{NewAdam(0.1), []float64{1e300, 1, 2}, 1, "step count 1e+300 is not a positive whole number"},
		{NewAdam(0.1), []float64{3, 1, 2, 4, 5}, 1, "a state of 5 numbers is not a step count and two moment vectors of 1 parameters"},
		{NewAdam(0.1), []float64{3, 1, 2}, 2, "a state of 3 numbers is not a step count and two moment vectors of 2 parameters"},
		{&SGD{LR: 0.1, Momentum: 0.9}, []float64{1, 2}, 3, "sgd: a state of 2 numbers is not the momentum of 3 parameters"},
		{&SGD{LR: 0.1, Momentum: 0.9}, []float64{1, 2}, 0, "sgd: a state of 2 numbers is not the momentum of 0 parameters"},
	} {
		if err := tc.o.SetState(tc.state, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T state %v for %d parameters: error %v, want %q", tc.o, tc.state, tc.n, err, tc.want)
		}
		if len(tc.o.State()) != 0 {
			t.Errorf("%T keeps a state it refused", tc.o)
		}
	}
	// An empty state is a fresh optimiser's, whatever the length.
	for _, o := range []Optimizer{NewAdam(0.1), &SGD{LR: 0.1, Momentum: 0.9}} {
		if err := o.SetState(nil, 5); err != nil {
			t.Errorf("%T: empty state: %v", o, err)
		}
	}
}
