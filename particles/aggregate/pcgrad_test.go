package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPCGradTwoTasksClosedForm checks PCGrad on K = 2 in 2-D against the
// projections worked out by hand (with two tasks the order does not
// matter). Tolerance: 1e-15 times the largest gradient entry, a few
// roundings of the two projections.
func TestPCGradTwoTasksClosedForm(t *testing.T) {
	tests := []struct {
		name string
		g    [][]float64
		want []float64
	}{
		// g₁·g₂ = −1 < 0, ‖g₁‖² = 1, ‖g₂‖² = 2:
		// g₁' = (1,0) − (−1/2)(−1,1) = (½,½), g₂' = (−1,1) − (−1/1)(1,0) = (0,1),
		// d = (½, 3/2).
		{"conflicting", [][]float64{{1, 0}, {-1, 1}}, []float64{0.5, 1.5}},
		// g₁·g₂ = 1 > 0: no projection, d = g₁ + g₂.
		{"agreeing", [][]float64{{1, 0}, {1, 1}}, []float64{2, 1}},
		// Identical gradients never conflict: d = 2g.
		{"identical", [][]float64{{1, 2}, {1, 2}}, []float64{2, 4}},
		// g₁ = (1,0), g₂ = (−3,0): g₁' = g₁ − (−3/9)g₂ = (1,0) − (1,0) = 0,
		// g₂' = g₂ − (−3/1)g₁ = 0, d = 0.
		{"opposite", [][]float64{{1, 0}, {-3, 0}}, []float64{0, 0}},
		// A zero gradient conflicts with nothing and is skipped: d = g₁.
		{"zero", [][]float64{{1, 0}, {0, 0}}, []float64{1, 0}},
		// g₁·g₂ = −1, ‖g₂‖² = 1 + 10⁻⁶ =: n:
		// g₁' = (1,0) + (1/n)(−1, 10⁻³) = (10⁻⁶/n, 10⁻³/n), g₂' = g₂ + g₁ = (0, 10⁻³),
		// d = (10⁻⁶/n, 10⁻³/n + 10⁻³).
		{"nearly collinear", [][]float64{{1, 0}, {-1, 1e-3}},
			[]float64{1e-6 / (1 + 1e-6), 1e-3/(1+1e-6) + 1e-3}},
		// g₂ = 10⁴·(−1,1): g₁' = (1,0) − (−10⁴/(2·10⁸))(−10⁴,10⁴) = (½,½),
		// g₂' = g₂ − (−10⁴/1)(1,0) = (0,10⁴), d = (½, 10⁴ + ½).
		{"1e4 larger", [][]float64{{1, 0}, {-1e4, 1e4}}, []float64{0.5, 1e4 + 0.5}},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &PCGrad{}, tt.g, Step{})
		if tol := 1e-15 * gradientScale(tt.g); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
	}
}

// TestPCGradTwoTasksDoNotConflict checks on random pairs in 5-D, many of
// them conflicting, that with K = 2 the direction has a non-negative
// inner product with both gradients: d·g₁ = g₁'·g₁ + g₂'·g₁ where
// g₂'·g₁ = 0 after a projection and g₁'·g₁ = ‖g₁‖² − (g₁·g₂)²/‖g₂‖² ≥ 0
// (Cauchy-Schwarz). Tolerance: 1e-14·‖g₁‖(‖g₁‖+‖g₂‖), rounding.
func TestPCGradTwoTasksDoNotConflict(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	conflicts := 0
	for trial := range 500 {
		g := randomGradients(rng, 2, 5)
		if trial%3 == 0 { // nearly opposite pairs, the hardest case
			for x := range g[1] {
				g[1][x] = -g[0][x] + 1e-6*g[1][x]
			}
		}
		if trial%5 == 0 {
			for x := range g[1] {
				g[1][x] *= 1e4
			}
		}
		if dotProduct(g[0], g[1]) < 0 {
			conflicts++
		}
		d := aggregateOrFail(t, &PCGrad{}, g, Step{Index: trial})
		n0, n1 := math.Sqrt(dotProduct(g[0], g[0])), math.Sqrt(dotProduct(g[1], g[1]))
		for i, gi := range g {
			ni := math.Sqrt(dotProduct(gi, gi))
			if p := dotProduct(d, gi); p < -1e-14*ni*(n0+n1) {
				t.Errorf("trial %d: d·g%d = %.3g < 0", trial, i+1, p)
			}
		}
	}
	if conflicts < 100 {
		t.Fatalf("only %d conflicting pairs of 500", conflicts)
	}
}

// pcgradReference is Algorithm 1 of Yu et al. written out for a given
// order of the tasks per i, sharing no code with PCGrad.Aggregate.
func pcgradReference(g [][]float64, order [][]int) []float64 {
	d := make([]float64, len(g[0]))
	for i := range g {
		gi := append([]float64(nil), g[i]...)
		for _, j := range order[i] {
			c, n := 0.0, 0.0
			for x := range gi {
				c += gi[x] * g[j][x]
				n += g[j][x] * g[j][x]
			}
			if c < 0 {
				for x := range gi {
					gi[x] -= c / n * g[j][x]
				}
			}
		}
		for x := range d {
			d[x] += gi[x]
		}
	}
	return d
}

// TestPCGradOrderIsDrawnPerStep checks, on three tasks where the order
// matters, that the direction is Algorithm 1 with the order drawn from
// (Seed, Particle, Index); that the same Step gives the same direction
// on another PCGrad value; and that changing any part of the key gives
// a different order for some step. Tolerance: 1e-14, rounding.
func TestPCGradOrderIsDrawnPerStep(t *testing.T) {
	// Each pair conflicts, so every order of the other two tasks gives a
	// different gᵢ'.
	g := [][]float64{{1, 0.2, 0}, {-0.7, 1, 0.1}, {-0.4, -0.9, 0.3}}
	orderOf := func(s Step) [][]int {
		var buf []int
		o := make([][]int, 3)
		for i := range 3 {
			o[i] = append([]int(nil), taskOrder(&buf, i, 3, s)...)
		}
		return o
	}
	seen := map[[6]int]bool{}
	for idx := range 40 {
		s := Step{Seed: 11, Particle: 2, Index: idx}
		o := orderOf(s)
		got := aggregateOrFail(t, &PCGrad{}, g, s)
		if want := pcgradReference(g, o); !closeTo(got, want, 1e-14) {
			t.Errorf("index %d, order %v: %v, want %v", idx, o, got, want)
		}
		if again := aggregateOrFail(t, &PCGrad{}, g, s); !closeTo(again, got, 0) {
			t.Errorf("index %d: %v then %v", idx, got, again)
		}
		seen[[6]int{o[0][0], o[0][1], o[1][0], o[1][1], o[2][0], o[2][1]}] = true
	}
	// 2³ = 8 combinations of orders; 40 draws miss one with probability
	// about 8·(7/8)⁴⁰ ≈ 0.04, so ask for at least 6.
	if len(seen) < 6 {
		t.Errorf("40 steps drew %d of the 8 combinations of orders", len(seen))
	}
	differs := func(a, b Step) bool {
		for i := range 20 {
			a.Index, b.Index = i, i
			oa, ob := orderOf(a), orderOf(b)
			for k := range oa {
				if oa[k][0] != ob[k][0] {
					return true
				}
			}
		}
		return false
	}
	base := Step{Seed: 11, Particle: 2}
	if !differs(base, Step{Seed: 12, Particle: 2}) {
		t.Error("the seed does not change the orders")
	}
	if !differs(base, Step{Seed: 11, Particle: 3}) {
		t.Error("the particle does not change the orders")
	}
	// Distinct directions on this g for distinct orders.
	a := aggregateOrFail(t, &PCGrad{}, g, Step{Seed: 11, Particle: 2, Index: 0})
	distinct := false
	for idx := 1; idx < 40 && !distinct; idx++ {
		distinct = !closeTo(aggregateOrFail(t, &PCGrad{}, g, Step{Seed: 11, Particle: 2, Index: idx}), a, 1e-9)
	}
	if !distinct {
		t.Error("the direction does not depend on the drawn order")
	}
}
