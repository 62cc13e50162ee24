package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestUPGradTwoTasksClosedForm checks K = 2 in 2-D against projections
// onto the dual cone C = {y : g₁·y ≥ 0, g₂·y ≥ 0} worked out by hand.
// Tolerance: 1e-15 relative to the largest gradient entry.
func TestUPGradTwoTasksClosedForm(t *testing.T) {
	const eps = 1e-3
	n := 1 + eps*eps
	tests := []struct {
		name string
		g    [][]float64
		want []float64
	}{
		// C = {y₁ ≥ 0, y₂ ≥ y₁}. g₁ = (1,0) breaks the second: its projection
		// onto y₂ = y₁ is (½,½), which keeps the first. g₂ = (−1,1) breaks the
		// first: onto y₁ = 0, (0,1). d = ½((½,½) + (0,1)) = (¼, ¾), half PCGrad's.
		{"conflicting", [][]float64{{1, 0}, {-1, 1}}, []float64{0.25, 0.75}},
		// No conflict: both in C, d = the mean.
		{"orthogonal", [][]float64{{1, 0}, {0, 2}}, []float64{0.5, 1}},
		{"identical", [][]float64{{1, 2}, {1, 2}}, []float64{1, 2}},
		// C = {y₁ = 0}: both project to 0.
		{"opposite", [][]float64{{1, 0}, {-3, 0}}, []float64{0, 0}},
		// The zero gradient adds no constraint and projects to 0: d = ½g₁.
		{"zero", [][]float64{{1, 0}, {0, 0}}, []float64{0.5, 0}},
		// g₂ = (−1, ε), g₁·g₂ = −1. π(g₁) = g₁ + g₂/(1+ε²) = (ε², ε)/(1+ε²),
		// in C since g₁·π = ε²/(1+ε²) ≥ 0; π(g₂) = g₂ + g₁ = (0, ε), g₂·π = ε² ≥ 0.
		{"nearly collinear", [][]float64{{1, 0}, {-1, eps}}, []float64{eps * eps / n / 2, (eps/n + eps) / 2}},
		// As the conflicting case with g₂ scaled by 10⁴: π(g₁) = (½,½),
		// π(g₂) = (0, 10⁴), d = (¼, ¼ + 5000).
		{"1e4 larger", [][]float64{{1, 0}, {-1e4, 1e4}}, []float64{0.25, 0.25 + 5e3}},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &UPGrad{}, tt.g, Step{})
		if tol := 1e-15 * gradientScale(tt.g); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
	}
}

// coneProjection2D is the brute-force projection of x onto
// C = {y : gⱼ·y ≥ 0} in the plane: the projection lies in the relative
// interior of a face of C, which is C itself (then it is x), a ray on a
// line gⱼ·y = 0 (then it is x's projection onto that line) or {0}; so it
// is the feasible candidate nearest to x among x, the projections onto
// the lines and 0.
func coneProjection2D(g [][]float64, x []float64) []float64 {
	feasible := func(y []float64) bool {
		ny := math.Hypot(y[0], y[1])
		for _, r := range g {
			if r[0]*y[0]+r[1]*y[1] < -1e-12*math.Hypot(r[0], r[1])*ny {
				return false
			}
		}
		return true
	}
	best, bestDist := []float64{0, 0}, math.Hypot(x[0], x[1])
	try := func(y []float64) {
		if d := math.Hypot(y[0]-x[0], y[1]-x[1]); feasible(y) && d < bestDist {
			best, bestDist = y, d
		}
	}
	try(x)
	for _, r := range g {
		if n := r[0]*r[0] + r[1]*r[1]; n > 0 {
			f := (r[0]*x[0] + r[1]*x[1]) / n
			try([]float64{x[0] - f*r[0], x[1] - f*r[1]})
		}
	}
	return best
}

// TestUPGradProjectionsAgainstBruteForce checks every projection
// π(gᵢ) = gᵢ + Gᵀλ⁽ⁱ⁾ against coneProjection2D on random sets of K = 2..5
// gradients in the plane (norms spread over 10⁴) and on the special
// sets, and that d has a non-negative inner product with every
// gradient. Tolerance: 1e-12 times the largest gradient norm on each
// projection; d·gⱼ ≥ −1e-12‖gⱼ‖·max‖gᵢ‖.
func TestUPGradProjectionsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	sets := [][][]float64{
		{{1, 0}, {-1, 1}}, {{1, 2}, {1, 2}}, {{1, 0}, {-3, 0}}, {{1, 0}, {0, 0}},
		{{1, 0}, {-1, 1e-3}}, {{1, 0}, {-1e4, 1e4}}, {{1, 0}, {-1, 1e-3}, {-1, -1e-3}},
		{{1, 0}, {-1, 0}, {0, 1}}, {{0, 0}, {0, 0}},
	}
	for k := 2; k <= 5; k++ {
		for range 40 {
			g := randomGradients(rng, k, 2)
			for i := range g {
				f := math.Pow(10, 4*rng.Float64())
				g[i][0] *= f
				g[i][1] *= f
			}
			sets = append(sets, g)
		}
	}
	for n, g := range sets {
		k := len(g)
		scale := 0.0
		for _, r := range g {
			scale = math.Max(scale, math.Hypot(r[0], r[1]))
		}
		a := &UPGrad{}
		a.gram = gramInto(nil, g)
		largest := largestDiagonal(a.gram, k)
		for i := range k {
			want := coneProjection2D(g, g[i])
			got := append([]float64(nil), g[i]...)
			if largest > 0 {
				m := make([]float64, k*k)
				for j, v := range a.gram {
					m[j] = v / largest
				}
				lambda, err := a.qp.solve(m, m[i*k:(i+1)*k], m[i*k+i], k)
				if err != nil {
					t.Errorf("set %d, task %d: %v", n, i, err)
					continue
				}
				for j, l := range lambda {
					got[0] += l * g[j][0]
					got[1] += l * g[j][1]
				}
			}
			if !closeTo(got, want, 1e-12*scale) {
				t.Errorf("set %d %v, task %d: projection %v, brute force %v", n, g, i, got, want)
			}
		}
		d := aggregateOrFail(t, &UPGrad{}, g, Step{})
		for j, r := range g {
			if p := dotProduct(d, r); p < -1e-12*math.Hypot(r[0], r[1])*scale {
				t.Errorf("set %d: d·g%d = %.3g < 0", n, j, p)
			}
		}
	}
}

// TestUPGradDoesNotConflictInHigherDimension checks d·gⱼ ≥ 0 for every
// task on random sets of K = 2..10 gradients in 6-D, conflicting and
// dependent ones among them (K > 6), norms spread over 10⁴. Tolerance
// as above.
func TestUPGradDoesNotConflictInHigherDimension(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for k := 2; k <= 10; k++ {
		for trial := range 10 {
			g := randomGradients(rng, k, 6)
			scale := 0.0
			for i := range g {
				f := math.Pow(10, 4*rng.Float64())
				for x := range g[i] {
					g[i][x] *= f
				}
				scale = math.Max(scale, math.Sqrt(dotProduct(g[i], g[i])))
			}
			d := aggregateOrFail(t, &UPGrad{}, g, Step{})
			for j, r := range g {
				if p := dotProduct(d, r); p < -1e-12*math.Sqrt(dotProduct(r, r))*scale {
					t.Errorf("K = %d, trial %d: d·g%d = %.3g < 0", k, trial, j, p)
				}
			}
		}
	}
}

// TestUPGradNearlyOppositePair checks a set from a toy run (mog3, 20
// repelled particles, seed 2, step 146) whose projections' dual
// solutions are hard to certify: two nearly opposite
// gradients and a third in their plane, which the passive pair
// represents with coefficients near 10⁶. The dual cone is {0} (the
// brute-force projections, coneProjection2D, are 0). UPGrad and DualProj
// must certify it and come within 1e-6 of the largest gradient norm of
// the brute-force directions, with d·gⱼ ≥ −1e-6‖gⱼ‖·max‖gᵢ‖: their
// multipliers reach 2.5·10⁴ on a scaled Gram matrix whose passive block
// has a condition number near 10¹², and the directions are 2·10⁻⁶ from 0
// (measured 2026-12-07), gradients being of norm 5 to 6.
func TestUPGradNearlyOppositePair(t *testing.T) {
	g := [][]float64{
		{-3.8853219817379334, 3.398702269521749},
		{3.978538287720506, -3.48028463666353},
		{-3.885321936034095, 4.398702315225588},
	}
	scale := 0.0
	for _, r := range g {
		scale = math.Max(scale, math.Sqrt(dotProduct(r, r)))
	}
	upgrad := make([]float64, 2)
	for _, r := range g {
		p := coneProjection2D(g, r)
		upgrad[0] += p[0] / 3
		upgrad[1] += p[1] / 3
	}
	mean := []float64{(g[0][0] + g[1][0] + g[2][0]) / 3, (g[0][1] + g[1][1] + g[2][1]) / 3}
	for name, c := range map[string]struct {
		a    Aggregator
		want []float64
	}{"upgrad": {&UPGrad{}, upgrad}, "dualproj": {&DualProj{}, coneProjection2D(g, mean)}} {
		d := aggregateOrFail(t, c.a, g, Step{})
		for j, r := range g {
			if p := dotProduct(d, r); p < -1e-6*math.Sqrt(dotProduct(r, r))*scale {
				t.Errorf("%s: d·g%d = %.3g < 0", name, j, p)
			}
		}
		if !closeTo(d, c.want, 1e-6*scale) {
			t.Errorf("%s: %v, brute force %v", name, d, c.want)
		}
	}
}

// TestUPGradBlockingIndexLeaves checks a set from a toy run (mog3, 20
// plain particles, seed 3) on which the active-set loop can run without
// end: the step towards the passive solution stops at an index whose
// multiplier rounding leaves a hair above 0, and unless that index
// leaves the passive set the same system is solved again. Both methods must return, certified,
// with no conflict beyond 1e-12‖gⱼ‖·max‖gᵢ‖.
func TestUPGradBlockingIndexLeaves(t *testing.T) {
	g := [][]float64{
		{-0.01978118926875737, 4.698588989156165},
		{6.980217790082375, -3.301409862613859},
		{7.980217790082547, -3.3014098626136885},
	}
	scale := 0.0
	for _, r := range g {
		scale = math.Max(scale, math.Sqrt(dotProduct(r, r)))
	}
	for name, a := range map[string]Aggregator{"upgrad": &UPGrad{}, "dualproj": &DualProj{}} {
		type answer struct {
			d   []float64
			err error
		}
		done := make(chan answer, 1)
		go func() {
			d, err := aggregateOrErr(a, g)
			done <- answer{d, err}
		}()
		select {
		case got := <-done:
			if got.err != nil {
				t.Fatalf("%s: %v", name, got.err)
			}
			d := got.d
			for j, r := range g {
				if p := dotProduct(d, r); p < -1e-12*math.Sqrt(dotProduct(r, r))*scale {
					t.Errorf("%s: d·g%d = %.3g < 0", name, j, p)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer within 10 s", name)
		}
	}
}
