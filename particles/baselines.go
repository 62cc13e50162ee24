package particles

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// SVGD is Stein variational gradient descent (Liu & Wang 2016):
//
//	φ(θ_m) = (1/M) Σ_a [k(θ_a,θ_m)·s(θ_a) + ρ·∇_{θ_a}k(θ_a,θ_m)],
//
// for one target with score s. Given K > 1 targets it samples their tempered
// product ∏_k p_k^{w_k}, whose score is Σ_k w_k s_k; Weights default to 1/K.
type SVGD struct {
	Kernel    RBF
	Repulsion float64
	Weights   []float64 // nil: equal weights

	stein steinSmoother
	comb  [][]float64
	w     []float64
	cols  [][]float64 // normalised scores' columns
}

// Direction implements Rule.
func (r *SVGD) Direction(dst [][]float64, e Ensemble) error {
	m, k, d, err := e.dims(dst)
	if err != nil {
		return err
	}
	if r.w, err = fixedWeights(r.w, r.Weights, k); err != nil {
		return fmt.Errorf("svgd: %w", err)
	}
	r.comb = grow(r.comb, m, d)
	s := e.scores()
	cols := s.allColumns(&r.cols, d)
	for a := range m {
		combine(r.comb[a], r.w, s, a, cols)
	}
	r.stein.direction(dst, e, r.comb, r.Kernel, r.Repulsion)
	return nil
}

// MOOSVGD is multi-objective SVGD (Liu, Tong & Liu 2021): every particle
// first takes the min-norm (MGDA) combination g_m of its own K scores, one QP
// per particle, and the ensemble then moves by SVGD on those directions:
//
//	φ(θ_m) = (1/M) Σ_a [k(θ_a,θ_m)·g_a + ρ·∇_{θ_a}k(θ_a,θ_m)].
//
// The kernel is over the positions θ, as for MT-SGD.
type MOOSVGD struct {
	Kernel    RBF
	Repulsion float64
	QP        minnorm.Solver

	stein steinSmoother
	comb  [][]float64
	mgda  perParticleMinNorm
}

// Direction implements Rule.
func (r *MOOSVGD) Direction(dst [][]float64, e Ensemble) error {
	m, _, d, err := e.dims(dst)
	if err != nil {
		return err
	}
	r.comb = grow(r.comb, m, d)
	if err := r.mgda.combine(r.comb, e.scores(), &r.QP); err != nil {
		return fmt.Errorf("moo-svgd: %w", err)
	}
	r.stein.direction(dst, e, r.comb, r.Kernel, r.Repulsion)
	return nil
}

// MGDA moves every particle independently along the min-norm combination of
// its own scores (Désidéri 2012; Sener & Koltun 2018): no kernel, no
// interaction.
type MGDA struct {
	QP   minnorm.Solver
	mgda perParticleMinNorm
}

// Direction implements Rule.
func (r *MGDA) Direction(dst [][]float64, e Ensemble) error {
	if _, _, _, err := e.dims(dst); err != nil {
		return err
	}
	if err := r.mgda.combine(dst, e.scores(), &r.QP); err != nil {
		return fmt.Errorf("mgda: %w", err)
	}
	return nil
}

// Linear is linear scalarisation: every particle moves along Σ_k w_k s_k with
// fixed weights (default 1/K), independently of the others.
type Linear struct {
	Weights []float64 // nil: equal weights
	w       []float64
	cols    [][]float64 // normalised scores' columns
}

// Direction implements Rule.
func (r *Linear) Direction(dst [][]float64, e Ensemble) error {
	m, k, d, err := e.dims(dst)
	if err != nil {
		return err
	}
	if r.w, err = fixedWeights(r.w, r.Weights, k); err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	s := e.scores()
	cols := s.allColumns(&r.cols, d)
	for a := range m {
		combine(dst[a], r.w, s, a, cols)
	}
	return nil
}

// perParticleMinNorm solves one min-norm QP per particle over that
// particle's own scores.
type perParticleMinNorm struct {
	u, w []float64
	cols [][]float64 // normalised scores' columns
}

// combine writes Σ_k w^m_k s_km into dst[m], w^m minimising ‖Σ_k w_k s_km‖².
func (p *perParticleMinNorm) combine(dst [][]float64, scores scoreSet, qp *minnorm.Solver) error {
	k := scores.targets()
	if len(p.w) != k {
		p.u, p.w = make([]float64, k*k), make([]float64, k)
	}
	cols := scores.allColumns(&p.cols, len(dst[0]))
	for a := range dst {
		for i := range k {
			for j := i; j < k; j++ {
				v := scores.dotScores(i, a, j, a, column(cols, i), column(cols, j))
				p.u[i*k+j], p.u[j*k+i] = v, v
			}
		}
		if _, err := qp.Solve(p.w, p.u); err != nil {
			return fmt.Errorf("particle %d: %w", a, err)
		}
		combine(dst[a], p.w, scores, a, cols)
	}
	return nil
}

// fixedWeights validates user weights for k targets, or makes equal ones.
func fixedWeights(buf, given []float64, k int) ([]float64, error) {
	if given == nil {
		if len(buf) != k {
			buf = make([]float64, k)
			for i := range buf {
				buf[i] = 1 / float64(k)
			}
		}
		return buf, nil
	}
	if len(given) != k {
		return nil, fmt.Errorf("%d weights for %d targets", len(given), k)
	}
	for i, v := range given {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("weight %d is %v; weights must be finite and non-negative", i, v)
		}
	}
	return given, nil
}
