package particles

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/particles/internal/simplextest"
	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// unitRoundoff is 2⁻⁵³.
const unitRoundoff = 0x1p-53

// TestMTSGDTraceTermDominates puts MT-SGD where the trace term ρ²(d/σ² − …)
// dwarfs the others, as on a network: d = 20,000, scores of size ~1e-6 per
// coordinate, K = 7, M = 4. The constant c it adds to every entry of U is
// ~0.64 against score terms ~2e-8; the test asserts c/max U3_ii ≥ 1e7, the
// ratio seen on LeNet. The
// weights must be those of U3, the first three terms alone (c never moves
// the minimiser), here computed term by term from the definition with
// rbf(), and minimised by enumerating supports.
//
// Tolerance on each weight: 1e-9 + 2K·e/λ⊥, λ⊥ the curvature of U3 along
// the simplex and e a bound on how far the two matrices differ beyond the
// constant: rounding U's entries at the size of c, 2⁻⁵³(c + 3 max U3) (the
// solver's own shift included), plus, for each of the two computations of
// the sums, (n + M²)·2⁻⁵³ times the sum of the absolute values of their
// terms (n = d products per inner product). For min wᵀAw over the simplex a
// perturbation E moves the minimiser by at most ‖E‖₂/λ⊥ ≤ K·max|E|/λ⊥.
func TestMTSGDTraceTermDominates(t *testing.T) {
	const m, k, d, rho = 4, 7, 20000, 1.0
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 17))
		theta := randomVectors(rng, m, d, 1)
		common := randomVectors(rng, m, d, 1)
		scores := make([][][]float64, k)
		for i := range scores {
			// Norms within a factor 4 of each other and a shared component:
			// the minimiser mixes several tasks (for seeds 1 and 2).
			alpha := 1e-6 * math.Pow(10, 0.6*rng.Float64()-0.3)
			scores[i] = randomVectors(rng, m, d, 1)
			for a := range scores[i] {
				for l := range scores[i][a] {
					scores[i][a][l] = alpha * (0.5*common[a][l] + scores[i][a][l])
				}
			}
		}
		e := Ensemble{Theta: theta, Scores: scores}
		r := &MTSGD{Repulsion: rho}
		u, _ := mtsgdU(t, r, e)
		diag := r.Diagnostics()
		sigma := diag.Sigma
		s2 := sigma * sigma

		u3 := make([]float64, k*k)
		abs := make([]float64, k*k) // Σ of |terms| in U3_ij
		for i := range k {
			for j := range k {
				for a := range m {
					for b := range m {
						kab := rbf(theta[a], theta[b], sigma)
						t1, t2, a1, a2 := 0.0, 0.0, 0.0, 0.0
						for l := range d {
							t1 += scores[i][a][l] * scores[j][b][l]
							a1 += math.Abs(scores[i][a][l] * scores[j][b][l])
							diff := (scores[i][a][l] - scores[j][b][l]) * (theta[a][l] - theta[b][l])
							t2 += diff
							a2 += math.Abs(diff)
						}
						u3[i*k+j] += kab * (t1 + rho/s2*t2)
						abs[i*k+j] += kab * (a1 + rho/s2*a2)
					}
				}
				u3[i*k+j] /= m * m
				abs[i*k+j] /= m * m
			}
		}
		maxU3, maxAbs := 0.0, 0.0
		for i := range k {
			maxU3 = math.Max(maxU3, math.Abs(u3[i*k+i]))
		}
		for _, v := range abs {
			maxAbs = math.Max(maxAbs, v)
		}
		c := u[0] - u3[0]
		if c/maxU3 < 1e7 {
			t.Fatalf("seed %d: c = %g, max U3_ii = %g: not the regime under test", seed, c, maxU3)
		}
		// U − U3 is the constant c up to rounding: a check on U3 itself.
		for i := range u {
			if math.Abs(u[i]-u3[i]-c) > 1e-12*c {
				t.Fatalf("seed %d: U − U3 = %g at %d, %g at 0: not a constant", seed, u[i]-u3[i], i, c)
			}
		}

		want := simplextest.MinByEnumeration(u3, k)
		if want == nil {
			t.Fatal("no feasible support")
		}
		lam, err := simplextest.Curvature(u3, k)
		if err != nil {
			t.Fatal(err)
		}
		if !(lam > 0) {
			t.Fatalf("seed %d: λ⊥(U3) = %g", seed, lam)
		}
		eps := unitRoundoff*(c+3*maxU3) + 2*float64(d+m*m)*unitRoundoff*maxAbs
		tol := 1e-9 + 2*k*eps/lam
		if !diag.QP.Converged {
			t.Errorf("seed %d: QP not converged: %+v", seed, diag.QP)
		}
		worst := 0.0
		for i, w := range diag.Weights {
			worst = math.Max(worst, math.Abs(w-want[i]))
		}
		if worst > tol {
			t.Errorf("seed %d: w = %v, brute force on U3 %v (tolerance %.2g)", seed, diag.Weights, want, tol)
		}
		t.Logf("seed %d: c/max U3_ii = %.3g, w* = %.4f, max |Δw| %.2g, tolerance %.2g", seed, c/maxU3, want, worst, tol)
	}
}

// With FirstTermOnly, U is the first term alone, here a quadruple loop over
// the definition with rbf(); the sums agree to rounding, bounded by
// 1e-12 times the sum of the absolute values of the terms (d + M² ≤ 50
// additions, each at most 2⁻⁵³ relative, is below 1e-14). The direction
// keeps its repulsive term: it must match Σ_k w_k φ_k from the definition,
// kernel gradient by finite differences (accurate to ~1e-9).
func TestMTSGDFirstTermOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for _, tc := range []struct{ m, k, d int }{{1, 2, 3}, {5, 3, 4}, {7, 4, 2}} {
		e := randomEnsemble(rng, tc.m, tc.k, tc.d)
		const rho = 0.8
		r := &MTSGD{Repulsion: rho, FirstTermOnly: true}
		got, dir := mtsgdU(t, r, e)
		sigma, w := r.Diagnostics().Sigma, r.Diagnostics().Weights
		m, k, d := tc.m, tc.k, tc.d
		for i := range k {
			for j := range k {
				want, abs := 0.0, 0.0
				for a := range m {
					for b := range m {
						kab := rbf(e.Theta[a], e.Theta[b], sigma)
						for l := range d {
							want += kab * e.Scores[i][a][l] * e.Scores[j][b][l]
							abs += kab * math.Abs(e.Scores[i][a][l]*e.Scores[j][b][l])
						}
					}
				}
				want /= float64(m * m)
				abs /= float64(m * m)
				if math.Abs(got[i*k+j]-want) > 1e-12*abs {
					t.Errorf("M=%d K=%d: U[%d][%d] = %.17g, first term %.17g", m, k, i, j, got[i*k+j], want)
				}
			}
		}
		for mm := range m {
			for l := range d {
				want := 0.0
				for i := range k {
					phi := 0.0
					for a := range m {
						phi += rbf(e.Theta[a], e.Theta[mm], sigma) * e.Scores[i][a][l]
						phi += rho * partial(func(x []float64) float64 { return rbf(x, e.Theta[mm], sigma) }, e.Theta[a], l, 1e-5)
					}
					want += w[i] * phi / float64(m)
				}
				if math.Abs(dir[mm][l]-want) > 1e-8 {
					t.Errorf("M=%d K=%d: particle %d coordinate %d: %v, definition %v", m, k, mm, l, dir[mm][l], want)
				}
			}
		}
	}
}

// A QP that one iteration cannot settle must surface as an error that
// errors.As recognises, from every rule that solves one. The scores of the
// one particle: s_0 = e_0, s_1 = e_1, s_2 = (2, 2, 5, 0, 0) and
// s_3 = (1, 3, 0, 5, 0). The midpoint of s_0 and s_1 has norm² ½ and inner
// product 2 with s_2 and s_3, so w* = (½, ½, 0, 0): a face that the first
// projected-gradient step from the centre does not reach, and that neither
// the KKT system on the full support (negative weights) nor clipping its
// answer finds.
func TestUncertifiedQPIsAnError(t *testing.T) {
	const k, d = 4, 5
	vecs := [][]float64{{1, 0, 0, 0, 0}, {0, 1, 0, 0, 0}, {2, 2, 5, 0, 0}, {1, 3, 0, 5, 0}}
	scores := make([][][]float64, k)
	for i := range k {
		scores[i] = [][]float64{vecs[i]}
	}
	values := [][]float64{{1}, {1}, {1}, {1}}
	e := Ensemble{Theta: [][]float64{make([]float64, d)}, Scores: scores, Values: values}
	capped := minnorm.Solver{MaxIter: 1}
	rules := map[string]Rule{
		"mtsgd":      &MTSGD{Repulsion: 1, QP: capped},
		"moo-svgd":   &MOOSVGD{Repulsion: 1, QP: capped},
		"mgda":       &MGDA{QP: capped},
		"pareto-mtl": &ParetoMTL{Prefs: [][]float64{{0.25, 0.25, 0.25, 0.25}}, QP: capped},
	}
	for name, r := range rules {
		dst := [][]float64{make([]float64, d)}
		err := r.Direction(dst, e)
		var nc *minnorm.NotConvergedError
		if !errors.As(err, &nc) {
			t.Errorf("%s: error %v, want a *minnorm.NotConvergedError", name, err)
			continue
		}
		if nc.K != k || nc.Iterations != 1 || !(nc.Gap > nc.Tol) {
			t.Errorf("%s: %+v, want K = %d, 1 iteration, gap above tolerance", name, nc, k)
		}
	}
	// Uncapped, the same problems are solved: MGDA's direction is
	// ½s_0 + ½s_1.
	for name, r := range map[string]Rule{"mtsgd": &MTSGD{Repulsion: 1}, "mgda": &MGDA{}} {
		dst := [][]float64{make([]float64, d)}
		if err := r.Direction(dst, e); err != nil {
			t.Errorf("%s uncapped: %v", name, err)
		}
		if name == "mgda" {
			want := []float64{0.5, 0.5, 0, 0, 0}
			for i := range want {
				if math.Abs(dst[0][i]-want[i]) > 1e-12 {
					t.Errorf("mgda: direction %v, want %v", dst[0], want)
					break
				}
			}
		}
	}
}
