package particles

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestMGDAPointSatisfiesKKT checks that MGDA's direction for each
// particle is the min-norm point of the convex hull of its K scores,
// through the optimality conditions of min wᵀUw over the simplex,
// U_ij = s_i·s_j: with d = Σ w_k s_k, (Uw)_i = s_i·d and wᵀUw = ‖d‖², so
//
//	s_i·d ≥ ‖d‖² for every i,  with equality where w_i > 0.
//
// The rule returns d only; w is recovered from it by least squares on
// [Sᵀ; 1ᵀ]w = [d; 1] (gonum's QR), unique because the scores are
// linearly independent (K ≤ d), and must lie on the simplex and
// reproduce d. The sets are random (M = 3 particles, K = 2..5 targets
// in 8-D), some with one score 10³ times larger and some with two
// nearly collinear scores. (With one score 10⁴ times larger, K ≥ 3,
// the solver certifies its gap, but a gap of 1e-10 of the hull's squared
// diameter, which the long score sets, leaves weights of 1e-6 and more
// on it that these conditions, at their tolerances, count as positive.)
//
// Tolerances, relative to the largest ‖s_i‖²: 1e-8 on the conditions,
// above the solver's certified duality gap (1e-10 of the squared
// diameter of the hull, at most 4 max‖s_i‖²); w_i counts as positive
// above 1e-6, and ‖Sᵀw − d‖ ≤ 1e-9·max‖s_i‖.
func TestMGDAPointSatisfiesKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	const m, d = 3, 8
	for k := 2; k <= 5; k++ {
		for variant := range 3 {
			e := randomEnsemble(rng, m, k, d)
			for a := range m {
				switch variant {
				case 1: // one score 10³ times larger
					for x := range d {
						e.Scores[0][a][x] *= 1e3
					}
				case 2: // two nearly collinear scores
					for x := range d {
						e.Scores[1][a][x] = e.Scores[0][a][x] + 1e-3*e.Scores[1][a][x]
					}
				}
			}
			dst := make([][]float64, m)
			for a := range dst {
				dst[a] = make([]float64, d)
			}
			if err := (&MGDA{}).Direction(dst, e); err != nil {
				t.Fatalf("K = %d, variant %d: %v", k, variant, err)
			}
			for a := range m {
				checkMinNormPoint(t, e, dst[a], a, k, d)
			}
		}
	}
}

// checkMinNormPoint checks the optimality conditions of dir as the
// min-norm point of particle a's scores.
func checkMinNormPoint(t *testing.T, e Ensemble, dir []float64, a, k, d int) {
	t.Helper()
	scale := 0.0
	for i := range k {
		s := e.Scores[i][a]
		scale = math.Max(scale, dotVec(s, s))
	}
	sys := mat.NewDense(d+1, k, nil)
	rhs := mat.NewVecDense(d+1, nil)
	for i := range k {
		for x := range d {
			sys.Set(x, i, e.Scores[i][a][x])
		}
		sys.Set(d, i, 1)
	}
	for x := range d {
		rhs.SetVec(x, dir[x])
	}
	rhs.SetVec(d, 1)
	var w mat.VecDense
	if err := w.SolveVec(sys, rhs); err != nil {
		t.Fatalf("particle %d: recovering the weights: %v", a, err)
	}
	var back mat.VecDense
	back.MulVec(sys, &w)
	back.SubVec(&back, rhs)
	if r := mat.Norm(&back, 2); r > 1e-9*math.Sqrt(scale) {
		t.Errorf("particle %d: the direction is not on the scores' affine hull (residual %.3g)", a, r)
	}
	norm2 := dotVec(dir, dir)
	for i := range k {
		wi := w.AtVec(i)
		if wi < -1e-6 {
			t.Errorf("particle %d: w%d = %.3g < 0", a, i, wi)
		}
		si := dotVec(e.Scores[i][a], dir)
		if si < norm2-1e-8*scale {
			t.Errorf("particle %d: s%d·d = %.12g < ‖d‖² = %.12g", a, i, si, norm2)
		}
		if wi > 1e-6 && si > norm2+1e-8*scale {
			t.Errorf("particle %d: w%d = %.3g > 0 but s%d·d = %.12g > ‖d‖² = %.12g", a, i, wi, i, si, norm2)
		}
	}
}

// dotVec returns a·b.
func dotVec(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
