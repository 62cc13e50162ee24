package particles

import (
	"fmt"

	"github.com/mtsgd/mtsgd/particles/aggregate"
)

// Aggregated applies one of package aggregate's multi-task methods to
// every particle: particle m's K scores, negated into the gradients of
// the task losses, are combined by its own aggregator (each particle
// keeps its own state), and the result, negated back, is its ascent
// direction φ(θ_m) = a_m: the particles move independently, an
// ensemble of M networks each trained by the method (Repelled adds the
// kernel term across them).
//
// The methods that read the task losses (the loss weightings) take them
// from Ensemble.Values; Ensemble.Step is the step's index, so that
// their random draws and epoch boundaries follow the run and a resumed
// run continues exactly.
type Aggregated struct {
	// New makes one particle's aggregator.
	New func() aggregate.Aggregator
	// Particles is M, so that SetState can make the aggregators before
	// the first step.
	Particles int
	// Seed keys the methods' random draws (aggregate.Step.Seed).
	Seed uint64
	// StepsPerEpoch is the number of updates in an epoch (0 on the toy
	// problems).
	StepsPerEpoch int
	// Repulsive turns on the kernel term; Kernel and Repulsion are then
	// the RBF kernel and the weight ρ of its gradient term.
	Repulsive bool
	Kernel    RBF
	Repulsion float64

	aggs   []aggregate.Aggregator
	grads  [][]float64
	comb   [][]float64
	out    []float64
	losses []float64
	stein  steinSmoother
}

// Direction implements Rule.
func (r *Aggregated) Direction(dst [][]float64, e Ensemble) error {
	m, k, d, err := e.dims(dst)
	if err != nil {
		return err
	}
	if err := r.make(m); err != nil {
		return err
	}
	r.grads = grow(r.grads, k, d)
	if len(r.out) != d {
		r.out = make([]float64, d)
	}
	if len(r.losses) != k {
		r.losses = make([]float64, k)
	}
	for a := range m {
		for t := range k {
			e.CopyScore(r.grads[t], t, a)
			for i, v := range r.grads[t] {
				r.grads[t][i] = -v
			}
		}
		s := aggregate.Step{Index: e.Step, StepsPerEpoch: r.StepsPerEpoch, Seed: r.Seed, Particle: a}
		if e.Values != nil {
			for t := range k {
				r.losses[t] = e.Values[t][a]
			}
			s.Losses = r.losses
		}
		if err := r.aggs[a].Aggregate(r.out, r.grads, s); err != nil {
			return fmt.Errorf("particle %d: %w", a, err)
		}
		for i, v := range r.out {
			dst[a][i] = -v
		}
	}
	return nil
}

// make makes the M aggregators on first use.
func (r *Aggregated) make(m int) error {
	if r.aggs != nil {
		if len(r.aggs) != m {
			return fmt.Errorf("particles: %d particles, the aggregators were made for %d", m, len(r.aggs))
		}
		return nil
	}
	if r.New == nil {
		return fmt.Errorf("particles: no aggregator")
	}
	r.aggs = make([]aggregate.Aggregator, m)
	for i := range r.aggs {
		r.aggs[i] = r.New()
	}
	return nil
}

// Stateful reports whether the aggregators keep state from step to step.
func (r *Aggregated) Stateful() bool {
	_, ok := r.New().(aggregate.Stateful)
	return ok
}

// State returns every particle's aggregator state, one after another,
// each preceded by its length: empty for a method without state.
func (r *Aggregated) State() []float64 {
	if !r.Stateful() {
		return nil
	}
	if err := r.make(r.Particles); err != nil {
		return nil
	}
	var s []float64
	for _, a := range r.aggs {
		st := a.(aggregate.Stateful).State()
		s = append(append(s, float64(len(st))), st...)
	}
	return s
}

// SetState restores what State returned, making the aggregators if the
// rule has not run yet.
func (r *Aggregated) SetState(s []float64) error {
	if !r.Stateful() {
		if len(s) != 0 {
			return fmt.Errorf("particles: %d state values for an aggregator without state", len(s))
		}
		return nil
	}
	if err := r.make(r.Particles); err != nil {
		return err
	}
	for i, a := range r.aggs {
		if len(s) == 0 {
			return fmt.Errorf("particles: the aggregators' state ends before particle %d", i)
		}
		n := int(s[0])
		if float64(n) != s[0] || n < 0 || n > len(s)-1 {
			return fmt.Errorf("particles: particle %d's aggregator state has length %v, %d values left", i, s[0], len(s)-1)
		}
		if err := a.(aggregate.Stateful).SetState(s[1 : 1+n]); err != nil {
			return fmt.Errorf("particles: particle %d's aggregator state: %w", i, err)
		}
		s = s[1+n:]
	}
	if len(s) != 0 {
		return fmt.Errorf("particles: %d values after the last particle's aggregator state", len(s))
	}
	return nil
}
