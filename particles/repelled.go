package particles

import "fmt"

// Repelled makes a particle method of a rule that moves the particles
// independently: the rule's directions a_m drive an SVGD step with the
// RBF kernel across the particles,
//
//	φ(θ_m) = (1/M) Σ_a [k(θ_a,θ_m)·a_a + ρ·∇_{θ_a}k(θ_a,θ_m)],
//
// as MOO-SVGD (Liu, Tong & Liu 2021) does with MGDA's direction: the
// kernel-weighted mean lets neighbouring particles share their
// directions, and the kernel-gradient term pushes them apart. Repelled
// Linear is SVGD on the tasks' equally weighted product, Repelled MGDA
// is MOO-SVGD. The kernel is over the positions, or Ensemble.Kernel
// when set.
type Repelled struct {
	Rule      Rule
	Kernel    RBF
	Repulsion float64

	comb  [][]float64
	stein steinSmoother
}

// Direction implements Rule.
func (r *Repelled) Direction(dst [][]float64, e Ensemble) error {
	m, _, d, err := e.shape(dst)
	if err != nil {
		return err
	}
	r.comb = grow(r.comb, m, d)
	if err := r.Rule.Direction(r.comb, e); err != nil {
		return err
	}
	r.stein.direction(dst, e, r.comb, r.Kernel, r.Repulsion)
	return nil
}

// A StatefulRule keeps state from step to step that a checkpoint must
// save for a resumed run to continue exactly (see Aggregated).
type StatefulRule interface {
	Rule
	// Stateful reports whether there is state to keep at all.
	Stateful() bool
	State() []float64
	SetState([]float64) error
}

// Stateful implements StatefulRule for the rule it repels.
func (r *Repelled) Stateful() bool {
	s, ok := r.Rule.(StatefulRule)
	return ok && s.Stateful()
}

// State implements StatefulRule.
func (r *Repelled) State() []float64 {
	if s, ok := r.Rule.(StatefulRule); ok {
		return s.State()
	}
	return nil
}

// SetState implements StatefulRule.
func (r *Repelled) SetState(state []float64) error {
	if s, ok := r.Rule.(StatefulRule); ok {
		return s.SetState(state)
	}
	if len(state) != 0 {
		return fmt.Errorf("particles: %d state values for a rule without state", len(state))
	}
	return nil
}
