// Package particles holds the update rules that move an ensemble of M
// particles θ_1..θ_M ∈ R^d towards K target densities p_1..p_K: MT-SGD
// (Phan et al., NeurIPS 2022) and the baselines it is compared with, SVGD,
// MOO-SVGD, MGDA and linear scalarisation.
//
// A rule sees only plain vectors: the particles' positions and, for every
// target k and particle m, the score ∇log p_k(θ_m). For a network the
// position is a flattened parameter vector and the score is minus the task
// loss gradient, so the same code serves the toy problems and the networks.
// A rule returns an ascent direction φ(θ_m) per particle; θ_m + ε·φ(θ_m)
// moves towards the targets, and an optimiser is handed −φ as the gradient.
//
// The kernel rules use the RBF kernel k(θ,θ') = exp(−‖θ−θ'‖²/(2σ²)) with a
// median-heuristic bandwidth (see RBF) and a repulsion weight ρ on the
// kernel-gradient term: ρ = 1 is the rule as published, smaller values weaken
// the force that keeps particles apart.
//
// MT-SGD, MOO-SVGD, MGDA and Pareto MTL weigh the targets by a min-norm
// quadratic programme (package minnorm). When its solution cannot be
// certified, Direction returns an error that wraps the solver's
// *minnorm.NotConvergedError (test for it with errors.As), and dst does not
// hold a valid direction: moving along an uncertified combination would
// break the guarantee these rules exist for, that the common direction does
// not worsen any target.
package particles

import (
	"fmt"
	"math"
)

// Ensemble is what a rule sees at one step.
type Ensemble struct {
	// Theta[m] is particle m's position; all have the same length d.
	Theta [][]float64
	// Scores[k][m] is ∇log p_k(Theta[m]), of length d (as scaled by
	// Factor or Normalize).
	Scores [][][]float64
	// Scores32, set instead of Scores, holds the same in float32: a
	// network's graphs compute their gradients in float32, and K·M of
	// them are a step's largest buffer. The rules compute in float64
	// either way.
	Scores32 [][][]float32
	// Factor, when not 0, multiplies every score as the rules read it.
	Factor float64
	// Normalize divides each target's scores, coordinate by coordinate,
	// by their L2 norm over the particles (at least NormalizeFloor) as
	// the rules read them: the authors' F.normalize of the M×d score
	// matrix. Scaling as the scores are read, in float64, rather than in
	// place leaves float32 scores unrounded, and lets MT-SGD normalise
	// a block of coordinates at a time instead of keeping K vectors of
	// norms.
	Normalize bool
	// Values[k][m], when set, is objective k's value at Theta[m] (for a
	// network, task k's loss). Only ParetoMTL needs it.
	Values [][]float64
	// Kernel, when set, replaces the kernel rules' RBF over Theta by a
	// kernel evaluated elsewhere (see Kernel); the other rules ignore it.
	Kernel *Kernel
	// Step counts the updates made before this one. Only ParetoMTL, whose
	// first steps are a separate phase, reads it; keeping the count here
	// rather than in the rule makes a resumed run continue exactly.
	Step int
}

// Targets returns K, the number of targets scored.
func (e Ensemble) Targets() int { return e.scores().targets() }

// CopyScore writes ∇log p_k(Theta[m]) into dst (length d) in float64 as
// the rules read it (from Scores or Scores32, scaled by Factor or
// Normalize): a rule of its own reads the scores this way. With Normalize
// it allocates the d norms.
func (e Ensemble) CopyScore(dst []float64, k, m int) {
	s := e.scores()
	var c []float64
	if s.normalize {
		c = s.columns(k, 0, len(dst), make([]float64, len(dst)))
	}
	s.copyTo(dst, k, m, 0, c)
}

// Rule computes the update direction of every particle.
type Rule interface {
	// Direction writes φ(θ_m) into dst[m] (length d) for every particle
	// m; dst shares no memory with the ensemble's vectors (a rule may use
	// it as scratch first).
	Direction(dst [][]float64, e Ensemble) error
}

// dims checks the shapes of e and dst and that every score is finite, and
// returns M, K and d.
func (e Ensemble) dims(dst [][]float64) (m, k, d int, err error) {
	if m, k, d, err = e.shape(dst); err != nil {
		return 0, 0, 0, err
	}
	return m, k, d, e.finiteScores()
}

// finiteScores returns an error naming the first score that is not
// finite, if any.
func (e Ensemble) finiteScores() error {
	s := e.scores()
	for t := range s.targets() {
		for i := range s.particles(t) {
			if !s.finite(t, i) {
				return fmt.Errorf("particles: score of target %d at particle %d is not finite", t, i)
			}
		}
	}
	return nil
}

// shape is dims without the scores' finiteness check, for a rule that
// makes it on its own pass over the scores.
func (e Ensemble) shape(dst [][]float64) (m, k, d int, err error) {
	if e.Scores != nil && e.Scores32 != nil {
		return 0, 0, 0, fmt.Errorf("particles: scores given in both float64 and float32")
	}
	s := e.scores()
	m, k = len(e.Theta), s.targets()
	if m == 0 {
		return 0, 0, 0, fmt.Errorf("particles: no particles")
	}
	if k == 0 {
		return 0, 0, 0, fmt.Errorf("particles: no targets")
	}
	d = len(e.Theta[0])
	if len(dst) != m {
		return 0, 0, 0, fmt.Errorf("particles: %d destination vectors for %d particles", len(dst), m)
	}
	for i := range m {
		if len(e.Theta[i]) != d || len(dst[i]) != d {
			return 0, 0, 0, fmt.Errorf("particles: particle %d has dimension %d (destination %d), want %d", i, len(e.Theta[i]), len(dst[i]), d)
		}
	}
	for t := range k {
		if n := s.particles(t); n != m {
			return 0, 0, 0, fmt.Errorf("particles: target %d has scores for %d particles, want %d", t, n, m)
		}
		for i := range m {
			if n := s.dim(t, i); n != d {
				return 0, 0, 0, fmt.Errorf("particles: score of target %d at particle %d has dimension %d, want %d", t, i, n, d)
			}
		}
	}
	if e.Factor != 0 && (e.Normalize || math.IsNaN(e.Factor) || math.IsInf(e.Factor, 0)) {
		return 0, 0, 0, fmt.Errorf("particles: score factor %v (with normalisation %v)", e.Factor, e.Normalize)
	}
	if e.Kernel != nil {
		if err := e.Kernel.check(m, d); err != nil {
			return 0, 0, 0, err
		}
	}
	return m, k, d, nil
}

// combine writes Σ_k w_k s_km into dst, the scores read with cols (see
// allColumns).
func combine(dst []float64, w []float64, s scoreSet, m int, cols [][]float64) {
	for i := range dst {
		dst[i] = 0
	}
	for k, wk := range w {
		s.addTo(dst, wk, k, m, 0, column(cols, k))
	}
}

// column returns cols[t], or nil without cols.
func column(cols [][]float64, t int) []float64 {
	if cols == nil {
		return nil
	}
	return cols[t]
}

// grow returns a slice of n vectors of length d, reusing buf when it fits.
func grow(buf [][]float64, n, d int) [][]float64 {
	if len(buf) == n && (n == 0 || len(buf[0]) == d) {
		return buf
	}
	buf = make([][]float64, n)
	for i := range buf {
		buf[i] = make([]float64, d)
	}
	return buf
}
