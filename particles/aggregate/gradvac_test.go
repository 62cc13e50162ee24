package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func freshGradVac() Stateful { return &GradVac{} }

// TestGradVacTwoTasksClosedForm checks steps worked out by hand in 2-D.
// Tolerance: 1e-15 relative to the largest gradient entry.
func TestGradVacTwoTasksClosedForm(t *testing.T) {
	r3 := 1 / math.Sqrt(3)
	c := -1 / math.Sqrt2
	tests := []struct {
		name        string
		g           [][]float64
		targets     float64 // both pairs' target before the step
		want        []float64
		wantTargets float64 // after it, β = ½
	}{
		// Zero targets: PCGrad's projections, g₁' = g₁ + ½g₂ = (½, ½) and
		// g₂' = g₂ + g₁ = (0, 1); the targets move to ½·cos = −1/(2√2).
		{"conflicting, zero targets", [][]float64{{1, 0}, {-1, 1}}, 0, []float64{0.5, 1.5}, c / 2},
		// Orthogonal gradients held to a cosine of ½: each turns by 30°
		// towards the other, the weight ‖gᵢ‖(½·1 − 0)/(‖gⱼ‖·√¾) = 1/√3:
		// g₁' = (1, 1/√3), g₂' = (1/√3, 1). Targets: ½·½ + ½·0 = ¼.
		{"orthogonal, target ½", [][]float64{{1, 0}, {0, 1}}, 0.5, []float64{1 + r3, 1 + r3}, 0.25},
		// Cosines at or above the target: no correction, d = the sum.
		{"orthogonal, zero targets", [][]float64{{1, 0}, {0, 2}}, 0, []float64{1, 2}, 0},
		{"agreeing, target ½", [][]float64{{1, 0}, {1, 1}}, 0.5, []float64{2, 1}, 0.5*0.5 + 0.5/math.Sqrt2},
	}
	for _, tt := range tests {
		a := &GradVac{}
		if err := a.SetState([]float64{2, 0, tt.targets, tt.targets, 0}); err != nil {
			t.Fatal(err)
		}
		got := aggregateOrFail(t, a, tt.g, Step{})
		if tol := 1e-15 * gradientScale(tt.g); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
		if s := a.State(); math.Abs(s[2]-tt.wantTargets) > 1e-15 || math.Abs(s[3]-tt.wantTargets) > 1e-15 {
			t.Errorf("%s: targets %v and %v after the step, want %v", tt.name, s[2], s[3], tt.wantTargets)
		}
	}
}

// TestGradVacReachesItsTargets checks Eq. 2's defining property on
// random pairs in 5-D below their targets: recovering g₁' = g₁ + f₁g₂
// and g₂' = g₂ + f₂g₁ from d = (1 + f₂)g₁ + (1 + f₁)g₂ (a 2×2 solve on
// the Gram matrix), each has exactly its target's cosine with the other
// task's gradient, within 1e-12; and with the targets at or below the
// cosine, d is the sum of the gradients.
func TestGradVacReachesItsTargets(t *testing.T) {
	rng := rand.New(rand.NewPCG(101, 102))
	for trial := range 50 {
		g := randomGradients(rng, 2, 5)
		cos := dotProduct(g[0], g[1]) / math.Sqrt(dotProduct(g[0], g[0])*dotProduct(g[1], g[1]))
		target := cos + (1-cos)*rng.Float64() // above the cosine
		if trial%5 == 0 {
			target = cos - (1+cos)*rng.Float64() // below it
		}
		a := &GradVac{}
		if err := a.SetState([]float64{2, 0, target, target, 0}); err != nil {
			t.Fatal(err)
		}
		d := aggregateOrFail(t, a, g, Step{Index: trial})
		// d = x₁g₁ + x₂g₂: solve the normal equations.
		g11, g12, g22 := dotProduct(g[0], g[0]), dotProduct(g[0], g[1]), dotProduct(g[1], g[1])
		b1, b2 := dotProduct(d, g[0]), dotProduct(d, g[1])
		det := g11*g22 - g12*g12
		x1, x2 := (b1*g22-b2*g12)/det, (b2*g11-b1*g12)/det
		if target <= cos {
			if math.Abs(x1-1) > 1e-12 || math.Abs(x2-1) > 1e-12 {
				t.Errorf("trial %d: target %v ≤ cosine %v, but d = %v·g₁ + %v·g₂", trial, target, cos, x1, x2)
			}
			continue
		}
		f1, f2 := x2-1, x1-1
		p1, p2 := make([]float64, 5), make([]float64, 5)
		for x := range p1 {
			p1[x] = g[0][x] + f1*g[1][x]
			p2[x] = g[1][x] + f2*g[0][x]
		}
		for i, p := range [][]float64{p1, p2} {
			other := g[1-i]
			got := dotProduct(p, other) / math.Sqrt(dotProduct(p, p)*dotProduct(other, other))
			if math.Abs(got-target) > 1e-12 {
				t.Errorf("trial %d: task %d's altered gradient has cosine %v with the other, want its target %v", trial, i, got, target)
			}
		}
	}
}

// TestGradVacStartsAsPCGrad checks that a fresh value's first step is
// PCGrad's (its targets start at 0) on random sets of K = 2..5 and on the
// hard sets, and that with β = 0 (Beta < 0) every step is, over 10 steps
// with the order drawn per step. Tolerance: 1e-12 relative to the
// direction's largest entry (the two formulas round differently).
func TestGradVacStartsAsPCGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(111, 112))
	sets := hardGradientSets()
	for k := 2; k <= 5; k++ {
		sets[string(rune('0'+k))+" random"] = randomGradients(rng, k, 6)
	}
	for name, g := range sets {
		s := Step{Seed: 4, Particle: 1, Index: 9}
		want := aggregateOrFail(t, &PCGrad{}, g, s)
		got := aggregateOrFail(t, &GradVac{}, g, s)
		if !closeTo(got, want, 1e-12*math.Max(maxAbs(want), 1e-300)) {
			t.Errorf("%s: first step %v, PCGrad %v", name, got, want)
		}
		fixed := &GradVac{Beta: -1}
		for step := range 10 {
			s.Index = step
			want := aggregateOrFail(t, &PCGrad{}, g, s)
			if got := aggregateOrFail(t, fixed, g, s); !closeTo(got, want, 1e-12*math.Max(maxAbs(want), 1e-300)) {
				t.Errorf("%s, β = 0, step %d: %v, PCGrad %v", name, step, got, want)
			}
		}
	}
}

// TestGradVacUndefined checks that a cosine below a target of 1, which no
// finite correction reaches, is an error wrapping ErrUndefined that
// leaves the targets as they were, and that parallel gradients at a
// target of 1 are not.
func TestGradVacUndefined(t *testing.T) {
	a := &GradVac{}
	state := []float64{2, 0, 1, 1, 0}
	if err := a.SetState(state); err != nil {
		t.Fatal(err)
	}
	err := a.Aggregate(make([]float64, 2), [][]float64{{1, 0}, {1, 1}}, Step{})
	if !errors.Is(err, ErrUndefined) {
		t.Errorf("cosine 1/√2 below a target of 1: error %v, want ErrUndefined", err)
	}
	for i, v := range a.State() {
		if v != state[i] {
			t.Fatalf("the failed step changed the state to %v", a.State())
		}
	}
	if err := a.Aggregate(make([]float64, 3), [][]float64{{1, -2, 3}, {1, -2, 3}}, Step{}); err != nil {
		t.Errorf("identical gradients at a target of 1: %v", err)
	}
}

func TestGradVacState(t *testing.T) {
	checkStateRoundTrip(t, freshGradVac)
	checkSetStateRejects(t, freshGradVac)
	for name, s := range map[string][]float64{
		"target above 1":    {2, 0, 1.5, 0, 0},
		"target below −1":   {2, 0, 0, -1.0000001, 0},
		"diagonal not 0":    {2, 0.1, 0, 0, 0},
		"length not 1 + K²": {2, 0, 0, 0},
	} {
		var a GradVac
		if err := a.SetState(s); err == nil {
			t.Errorf("%s: SetState accepted %v", name, s)
		}
	}
	if err := (&GradVac{Beta: 1.5}).Aggregate(make([]float64, 2), identityGradients(2), Step{}); err == nil {
		t.Error("β = 1.5 accepted")
	}
}

func TestGradVacErrors(t *testing.T) { checkInputErrors(t, asAggregator(freshGradVac), false) }
func TestGradVacOdd(t *testing.T)    { checkOdd(t, asAggregator(freshGradVac)) }
func TestGradVacNoNaN(t *testing.T)  { checkNoNaN(t, asAggregator(freshGradVac)) }
