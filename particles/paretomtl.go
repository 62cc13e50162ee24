package particles

import (
	"errors"
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// ParetoMTL is Pareto multi-task learning (Lin, Zhen, Li, Zhang & Kwong,
// NeurIPS 2019): particle i is tied to a preference vector u_i and looks
// for a Pareto-stationary point in its sub-region
//
//	Ω_i = {θ : (u_j − u_i)ᵀ F(θ)/‖F(θ)‖ ≤ 0 for every j ≠ i},
//
// F the vector of the K objectives (here the task losses, which the
// Ensemble's Values carry) and G_j = (u_j − u_i)ᵀF/‖F‖ its constraints. No
// kernel, no interaction between particles.
//
// While a particle is outside its sub-region during the first InitSteps
// steps (Ensemble.Step < InitSteps: the feasibility phase), it descends the
// active constraints: the min-norm combination β of their gradients
// ∇G_j = Σ_k (u_jk − u_ik)∇F_k. Otherwise each step takes the min-norm combination (λ, β) of the K
// objective gradients and the gradients of the active constraints
// (G_j > 0), and moves along Σ_k a_k s_k with task weights
// a_k = λ_k + Σ_j β_j (u_jk − u_ik), normalised to Σ|a_k| = 1, as the
// authors' code does. (s_k = −∇F_k: the scores.)
type ParetoMTL struct {
	// Prefs[i] is particle i's preference vector (length K).
	Prefs [][]float64
	// InitSteps bounds the feasibility phase, in steps.
	InitSteps int
	QP        minnorm.Solver

	h       []float64 // K×K Gram matrix of the scores
	vecs    [][]float64
	gram, w []float64
	cols    [][]float64 // normalised scores' columns
}

// Preferences returns m preference vectors for k objectives as Lin et al.
// spread them for two objectives: u_i = (cos t_i, sin t_i) with t_i evenly
// spaced over [0, π/2], t_i = i·π/(2(m−1)), from (1, 0) to (0, 1). Only
// k = 2 is defined, as in the paper and its code.
func Preferences(m, k int) ([][]float64, error) {
	if k != 2 {
		return nil, fmt.Errorf("pareto-mtl: preference vectors are defined for 2 tasks (Lin et al. 2019), not %d", k)
	}
	prefs := make([][]float64, m)
	for i := range prefs {
		t := 0.0
		if m > 1 {
			t = float64(i) * math.Pi / (2 * float64(m-1))
		}
		prefs[i] = []float64{math.Cos(t), math.Sin(t)}
	}
	return prefs, nil
}

// Direction implements Rule. It needs e.Values.
func (r *ParetoMTL) Direction(dst [][]float64, e Ensemble) error {
	m, k, d, err := e.dims(dst)
	if err != nil {
		return err
	}
	s := e.scores()
	cols := s.allColumns(&r.cols, d)
	if err := r.check(e.Values, m, k); err != nil {
		return err
	}
	r.h = resize(r.h, k*k)
	f := make([]float64, k)
	for i := range m {
		for t := range k {
			f[t] = e.Values[t][i]
		}
		for a := range k {
			for b := a; b < k; b++ {
				v := s.dotScores(a, i, b, i, column(cols, a), column(cols, b))
				r.h[a*k+b], r.h[b*k+a] = v, v
			}
		}
		a, err := r.particleWeights(i, f, e.Step < r.InitSteps)
		if err != nil {
			return err
		}
		combine(dst[i], a, s, i, cols)
	}
	return nil
}

// check reports objective values or preference vectors that do not fit
// m particles and k objectives.
func (r *ParetoMTL) check(values [][]float64, m, k int) error {
	if len(values) != k {
		return errors.New("pareto-mtl: needs the objective values (Ensemble.Values)")
	}
	if len(r.Prefs) != m {
		return fmt.Errorf("pareto-mtl: %d preference vectors for %d particles", len(r.Prefs), m)
	}
	for i, u := range r.Prefs {
		if len(u) != k {
			return fmt.Errorf("pareto-mtl: preference %d has %d entries for %d objectives", i, len(u), k)
		}
	}
	return nil
}

// particleWeights returns particle i's task weights a (its direction is
// Σ_t a_t s_t) from its objective values f and r.h, the Gram matrix of
// its scores; initPhase is the feasibility phase (Ensemble.Step <
// InitSteps).
func (r *ParetoMTL) particleWeights(i int, f []float64, initPhase bool) ([]float64, error) {
	k := len(f)
	norm := 0.0
	for _, v := range f {
		norm += v * v
	}
	norm = math.Sqrt(norm)
	if !(norm > 0) || math.IsInf(norm, 0) {
		return nil, fmt.Errorf("pareto-mtl: particle %d has objective values %v", i, f)
	}
	active := r.activeConstraints(i, f, norm)
	// The vectors of the QP, as coefficients over the K gradients.
	var vecs [][]float64
	feasibility := initPhase && len(active) > 0
	if !feasibility {
		for t := range k {
			unit := make([]float64, k)
			unit[t] = 1
			vecs = append(vecs, unit)
		}
	}
	vecs = append(vecs, active...)
	weights, err := r.minNorm(vecs, k)
	if err != nil {
		return nil, fmt.Errorf("pareto-mtl: particle %d: %w", i, err)
	}
	return coefficients(weights, vecs, k, !feasibility), nil
}

// activeConstraints returns the coefficient vectors w_j = u_j − u_i of
// the constraints of particle i's sub-region that its objective values f
// (of norm norm) violate: those with w_jᵀf/‖f‖ > 0.
func (r *ParetoMTL) activeConstraints(i int, f []float64, norm float64) [][]float64 {
	u := r.Prefs[i]
	var active [][]float64
	for j := range r.Prefs {
		if j == i {
			continue
		}
		w := make([]float64, len(f))
		g := 0.0
		for t := range f {
			w[t] = r.Prefs[j][t] - u[t]
			g += w[t] * f[t] / norm
		}
		if g > 0 {
			active = append(active, w)
		}
	}
	return active
}

// coefficients returns the direction's coefficients over the K gradients,
// Σ_v weights_v vecs_v, scaled to sum to 1 in absolute value where
// normalise is set (and the sum is not zero).
func coefficients(weights []float64, vecs [][]float64, k int, normalise bool) []float64 {
	a := make([]float64, k)
	for v, c := range vecs {
		for t := range k {
			a[t] += weights[v] * c[t]
		}
	}
	if !normalise {
		return a
	}
	s := 0.0
	for _, x := range a {
		s += math.Abs(x)
	}
	if s > 0 {
		for t := range a {
			a[t] /= s
		}
	}
	return a
}

// minNorm returns the convex weights of the vectors Σ_t c_t ∇F_t (c in
// vecs) of least norm, from the Gram matrix of the gradients.
func (r *ParetoMTL) minNorm(vecs [][]float64, k int) ([]float64, error) {
	n := len(vecs)
	r.gram, r.w = resize(r.gram, n*n), resize(r.w, n)
	for a := range n {
		for b := range n {
			v := 0.0
			for s := range k {
				for t := range k {
					v += vecs[a][s] * r.h[s*k+t] * vecs[b][t]
				}
			}
			r.gram[a*n+b] = v
		}
	}
	// Symmetrise exactly: the solver checks symmetry.
	for a := range n {
		for b := a + 1; b < n; b++ {
			v := (r.gram[a*n+b] + r.gram[b*n+a]) / 2
			r.gram[a*n+b], r.gram[b*n+a] = v, v
		}
	}
	if _, err := r.QP.Solve(r.w, r.gram); err != nil {
		return nil, err
	}
	return r.w, nil
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
