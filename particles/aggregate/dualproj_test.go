package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDualProjTwoTasksClosedForm checks K = 2 in 2-D against
// projections of the mean onto the dual cone worked out by hand.
// Tolerance: 1e-15 relative to the largest gradient entry.
func TestDualProjTwoTasksClosedForm(t *testing.T) {
	tests := []struct {
		name string
		g    [][]float64
		want []float64
	}{
		// C = {y₁ ≥ 0, y₂ ≥ y₁}; ḡ = (0, ½) is in C: d = ḡ. UPGrad gives
		// (¼, ¾) here: the two differ on conflicting gradients.
		{"conflicting, mean inside", [][]float64{{1, 0}, {-1, 1}}, []float64{0, 0.5}},
		// C = {y₁ ≥ 0, 2y₂ ≥ 3y₁}; ḡ = (−¼, ½) breaks y₁ ≥ 0 alone: its
		// projection onto y₁ = 0 is (0, ½), which keeps 2y₂ ≥ 3y₁.
		{"conflicting, mean outside", [][]float64{{1, 0}, {-1.5, 1}}, []float64{0, 0.5}},
		// No conflict: d = the mean.
		{"orthogonal", [][]float64{{1, 0}, {0, 2}}, []float64{0.5, 1}},
		{"identical", [][]float64{{1, 2}, {1, 2}}, []float64{1, 2}},
		// C = {y₁ = 0}: ḡ = (−1, 0) projects to 0.
		{"opposite", [][]float64{{1, 0}, {-3, 0}}, []float64{0, 0}},
		// The zero gradient adds no constraint: d = ḡ = ½g₁.
		{"zero", [][]float64{{1, 0}, {0, 0}}, []float64{0.5, 0}},
		// ḡ = (−4999.5, 5000) breaks y₁ ≥ 0 only: (0, 5000), which keeps
		// y₂ ≥ y₁.
		{"1e4 larger", [][]float64{{1, 0}, {-1e4, 1e4}}, []float64{0, 5000}},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &DualProj{}, tt.g, Step{})
		if tol := 1e-15 * gradientScale(tt.g); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
	}
}

// TestDualProjAgainstBruteForce checks d against the brute-force
// projection of the mean onto the cone in the plane (coneProjection2D)
// on random sets of K = 2..5 gradients with norms spread over 10⁴, and
// that d has a non-negative inner product with every gradient in 6-D
// for K = 2..10. Tolerances: 1e-12 times the largest gradient norm plus
// 1e-11 times Σⱼ|wⱼ|‖gⱼ‖, the size of the terms d = Σⱼ wⱼgⱼ sums: the
// certificate holds the optimality conditions to 1e-12 of their terms,
// and on nearly opposite gradients the weights reach 10³ while d is
// 10⁻⁸ (a set of this test); d·gⱼ ≥ −1e-12‖gⱼ‖·max‖gᵢ‖ as UPGrad's.
func TestDualProjAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for k := 2; k <= 5; k++ {
		for range 40 {
			g := randomGradients(rng, k, 2)
			scale := spreadNorms(rng, g, 0, 4)
			mean := make([]float64, 2)
			for _, r := range g {
				mean[0] += r[0] / float64(k)
				mean[1] += r[1] / float64(k)
			}
			want := coneProjection2D(g, mean)
			a := &DualProj{}
			got := aggregateOrFail(t, a, g, Step{})
			terms := 0.0
			for j, w := range a.w {
				terms += math.Abs(w) * math.Sqrt(dotProduct(g[j], g[j]))
			}
			if tol := 1e-12*scale + 1e-11*terms; !closeTo(got, want, tol) {
				t.Errorf("%v: %v, brute force %v (tolerance %.3g)", g, got, want, tol)
			}
		}
	}
	for k := 2; k <= 10; k++ {
		for trial := range 10 {
			g := randomGradients(rng, k, 6)
			scale := spreadNorms(rng, g, 0, 4)
			d := aggregateOrFail(t, &DualProj{}, g, Step{})
			for j, r := range g {
				if p := dotProduct(d, r); p < -1e-12*math.Sqrt(dotProduct(r, r))*scale {
					t.Errorf("K = %d, trial %d: d·g%d = %.3g < 0", k, trial, j, p)
				}
			}
		}
	}
}
