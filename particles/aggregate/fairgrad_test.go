package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFairGradOrthogonalClosedForm checks orthogonal gradients
// g₁ = (a, 0), g₂ = (0, b), where the equations decouple:
// a²w₁ = w₁^(−1/α) gives w₁ = a^(−2α/(α+1)) and d = (a^((1−α)/(1+α)),
// b^((1−α)/(1+α))). Tolerance: 1e-12 relative.
func TestFairGradOrthogonalClosedForm(t *testing.T) {
	for _, alpha := range []float64{0.5, 1, 2, 5} {
		for _, ab := range [][2]float64{{1, 2}, {3, 0.25}, {1e-3, 1e3}} {
			e := (1 - alpha) / (1 + alpha)
			want := []float64{math.Pow(ab[0], e), math.Pow(ab[1], e)}
			got := aggregateOrFail(t, &FairGrad{Alpha: alpha}, [][]float64{{ab[0], 0}, {0, ab[1]}}, Step{})
			if !closeTo(got, want, 1e-12*maxAbs(want)) {
				t.Errorf("α = %v, a, b = %v: %v, want %v", alpha, ab, got, want)
			}
		}
	}
}

// TestFairGradSolvesItsEquations checks the equations that define the
// weights, (GGᵀw)ᵢ = wᵢ^(−1/α), with w recovered from d = Gᵀw (the
// gradients independent, K ≤ d), each within 1e-9 relative, on random
// sets of K = 2..6 gradients in 8-D with norms spread over 10⁴, for
// α = 0.5, 1, 2 and 5; and that α = 1 gives Nash-MTL's direction
// (NashMTL's own solver, 1e-9 relative).
func TestFairGradSolvesItsEquations(t *testing.T) {
	rng := rand.New(rand.NewPCG(121, 122))
	for k := 2; k <= 6; k++ {
		g := randomGradients(rng, k, 8)
		spreadNorms(rng, g, -2, 2)
		gram := gramInto(nil, g)
		for _, alpha := range []float64{0.5, 1, 2, 5} {
			a := &FairGrad{Alpha: alpha}
			d := aggregateOrFail(t, a, g, Step{})
			for i := range k {
				// gᵢ·d = (GGᵀw)ᵢ.
				lhs := dotProduct(g[i], d)
				rhs := math.Pow(a.w[i], -1/alpha)
				if math.Abs(lhs-rhs) > 1e-9*rhs {
					t.Errorf("K = %d, α = %v, task %d: (GGᵀw) = %v, w^(−1/α) = %v", k, alpha, i, lhs, rhs)
				}
				sum := 0.0
				for j := range k {
					sum += gram[i*k+j] * a.w[j]
				}
				if math.Abs(sum-lhs) > 1e-9*math.Abs(lhs) {
					t.Errorf("K = %d, α = %v: d is not Gᵀw", k, alpha)
				}
			}
		}
		nash := aggregateOrFail(t, &NashMTL{}, g, Step{})
		fair := aggregateOrFail(t, &FairGrad{}, g, Step{})
		if !closeTo(fair, nash, 1e-9*maxAbs(nash)) {
			t.Errorf("K = %d: α = 1 gives %v, Nash-MTL %v", k, fair, nash)
		}
	}
}

// TestFairGradFavoursTheWorstOff checks what α does: on two gradients of
// norms 1 and 10 at 60°, the smaller task's share g₁·d relative to the
// larger's grows with α, as α-fairness promises.
func TestFairGradFavoursTheWorstOff(t *testing.T) {
	g := [][]float64{{1, 0}, {5, 5 * math.Sqrt(3)}}
	last := 0.0
	for _, alpha := range []float64{0.5, 1, 2, 5, 20} {
		d := aggregateOrFail(t, &FairGrad{Alpha: alpha}, g, Step{})
		ratio := dotProduct(g[0], d) / dotProduct(g[1], d)
		if ratio <= last {
			t.Errorf("α = %v: share ratio %v, not above %v at the smaller α", alpha, ratio, last)
		}
		last = ratio
	}
}

// TestFairGradStationary checks that where 0 is in the gradients' convex
// hull (opposite gradients, a zero one) the direction is 0, as
// Nash-MTL's; and that α ≤ 0 is refused.
func TestFairGradStationary(t *testing.T) {
	for name, g := range map[string][][]float64{
		"opposite": {{1, 2}, {-2, -4}},
		"zero":     {{1, 2}, {0, 0}},
		"around 0": {{1, 0}, {-0.5, 0.8660254037844386}, {-0.5, -0.8660254037844386}},
	} {
		d := aggregateOrFail(t, &FairGrad{Alpha: 2}, g, Step{})
		if maxAbs(d) != 0 {
			t.Errorf("%s: %v, want 0", name, d)
		}
	}
	for _, alpha := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := aggregateOrErr(&FairGrad{Alpha: alpha}, [][]float64{{1, 0}, {0, 1}}); err == nil {
			t.Errorf("α = %v accepted", alpha)
		}
	}
}

// TestFairGradAcrossAlpha checks the solve over the range of α the
// method takes, 0.1 to 30, on 20 random sets for each K = 2..10 in 12-D
// with norms spread over 10⁴: each converges, and each task's share
// gᵢ·d matches wᵢ^(−1/α) within 1e-10 of ‖gᵢ‖‖d‖ (the share's rounding
// scale; at small α some shares are 10⁻¹³ of their terms, at large α some
// weights are tiny).
func TestFairGradAcrossAlpha(t *testing.T) {
	for _, alpha := range []float64{0.1, 0.3, 3, 10, 30} {
		rng := rand.New(rand.NewPCG(5, 6))
		for k := 2; k <= 10; k++ {
			for trial := range 20 {
				g := randomGradients(rng, k, 12)
				spreadNorms(rng, g, -2, 2)
				a := &FairGrad{Alpha: alpha}
				d, err := aggregateOrErr(a, g)
				if err != nil {
					t.Fatalf("α = %v, K = %d, trial %d: %v", alpha, k, trial, err)
				}
				nd := math.Sqrt(dotProduct(d, d))
				for i := range k {
					share, want := dotProduct(g[i], d), math.Pow(a.w[i], -1/alpha)
					if math.Abs(share-want) > 1e-10*math.Sqrt(dotProduct(g[i], g[i]))*nd {
						t.Errorf("α = %v, K = %d, trial %d, task %d: share %v, w^(−1/α) %v", alpha, k, trial, i, share, want)
					}
				}
			}
		}
		for name, g := range hardGradientSets() {
			if _, err := aggregateOrErr(&FairGrad{Alpha: alpha}, g); err != nil {
				t.Errorf("α = %v, %s: %v", alpha, name, err)
			}
		}
	}
}
