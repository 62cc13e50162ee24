package aggregate

import (
	"errors"
	"fmt"
	"math"
)

// STCH's defaults, LibMTL's.
const (
	DefaultSTCHMu     = 1.0
	DefaultSTCHWarmup = 4
)

// STCH is smooth Tchebycheff scalarisation (Lin, Zhang, Zhou & Zhang,
// "Smooth Tchebycheff Scalarization for Multi-Objective Optimization",
// ICML 2024) as LibMTL applies it to multi-task learning, after
// the authors' STCH_MTL code: the worst task's normalised log loss,
// smoothed by a log-sum-exp of temperature μ,
//
//	L = K·μ·log Σₖ exp(log(Lₖ/nₖ)/μ),
//	wₖ = ∂L/∂Lₖ = K·softmax(log(L/n)/μ)ₖ / Lₖ,  d = Σₖ wₖ gₖ,
//
// where n, the nadir vector, is each task's mean loss over a warm-up
// epoch. Until then the tasks' log losses are summed, wₖ = 1/Lₖ. As
// μ → 0 the direction follows the task whose loss is farthest above its
// nadir value alone; as μ grows the softmax tends to 1/K and the
// weights to the summed log losses' 1/Lₖ.
//
// Epochs count from 0, as Step.Index/Step.StepsPerEpoch does and as
// LibMTL's trainer does: epochs 0 to Warmup − 1 sum the log losses,
// epoch Warmup sums them too and averages each task's loss into n, and
// from epoch Warmup + 1 on the smoothed maximum applies. With Warmup = 0
// the first epoch collects n. LibMTL adds 1e-20 to the losses inside its
// logarithms; here a loss must be positive (a zero loss is an error).
//
// Sign and scale: the gradients are loss gradients and d is a descent
// direction for θ ← θ − lr·d; the scale is that of the sum of the tasks'
// log-loss gradients, Σₖ gₖ/Lₖ, in the warm-up and, times K, the
// softmax's convex combination after, as in LibMTL.
//
// The state (Stateful) is K, the count of losses averaged into n, then
// each task's sum of them. STCH needs epochs (Step.StepsPerEpoch > 0).
// On a GPU host it runs on the host, on float64 gradients.
type STCH struct {
	// Mu is the temperature μ > 0; 0 means DefaultSTCHMu.
	Mu float64
	// Warmup is the number of epochs of summed log losses before the
	// nadir epoch; a negative value means 0, and 0 DefaultSTCHWarmup.
	Warmup int

	count float64   // losses averaged into the nadir so far
	sums  []float64 // each task's sum of them; nil before the first step
	w     []float64
}

func (a *STCH) mu() float64 {
	if a.Mu == 0 {
		return DefaultSTCHMu
	}
	return a.Mu
}

func (a *STCH) warmup() int {
	switch {
	case a.Warmup == 0:
		return DefaultSTCHWarmup
	case a.Warmup < 0:
		return 0
	}
	return a.Warmup
}

// Aggregate implements Aggregator.
func (a *STCH) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, true)
	if err != nil {
		return fmt.Errorf("stch: %w", err)
	}
	if err := checkAtLeast(s.Losses, 0, true, "loss of task"); err != nil {
		return fmt.Errorf("stch: %w", err)
	}
	if mu := a.mu(); !(mu > 0) || math.IsInf(mu, 0) {
		return fmt.Errorf("stch: μ = %v, want a positive number", mu)
	}
	if s.StepsPerEpoch <= 0 {
		return errors.New("stch: the nadir vector is an epoch's mean loss, and the steps have no epochs (StepsPerEpoch 0)")
	}
	if err := checkTaskCount(len(a.sums), k); err != nil {
		return fmt.Errorf("stch: %w", err)
	}
	epoch := s.Index / s.StepsPerEpoch
	if epoch > a.warmup() && a.count == 0 {
		return fmt.Errorf("stch: epoch %d is past the nadir epoch %d, but no loss was averaged into the nadir vector", epoch, a.warmup())
	}
	if a.sums == nil {
		a.sums = make([]float64, k)
	}
	a.w = growFloats(a.w, k)
	if epoch <= a.warmup() {
		for i, l := range s.Losses {
			a.w[i] = 1 / l
		}
		if epoch == a.warmup() {
			a.count++
			for i, l := range s.Losses {
				a.sums[i] += l
			}
		}
	} else {
		mu := a.mu()
		for i, l := range s.Losses {
			a.w[i] = math.Log(l/(a.sums[i]/a.count)) / mu
		}
		softmaxInto(a.w, a.w)
		for i, l := range s.Losses {
			a.w[i] *= float64(k) / l
		}
	}
	writeWeightedSum(dst, a.w, g)
	return nil
}

// State implements Stateful: K, the count, then each task's sum of
// losses; nothing before the first step.
func (a *STCH) State() []float64 {
	if a.sums == nil {
		return nil
	}
	return append([]float64{float64(len(a.sums)), a.count}, a.sums...)
}

// SetState implements Stateful. It rejects a count that is not a whole
// number and sums that are negative, or positive with a count of 0.
func (a *STCH) SetState(state []float64) error {
	k, err := weightingStateTasks(state, 1, 1)
	if err != nil {
		return fmt.Errorf("stch: %w", err)
	}
	if k == 0 {
		a.count, a.sums = 0, nil
		return nil
	}
	count, sums := state[1], state[2:]
	if !isCount(count) {
		return fmt.Errorf("stch: state's count %v is not a whole number", count)
	}
	for i, v := range sums {
		if v < 0 || (count == 0 && v != 0) || (count > 0 && v == 0) {
			return fmt.Errorf("stch: state's loss sum of task %d is %v with a count of %v", i, v, count)
		}
	}
	a.count, a.sums = count, append([]float64(nil), sums...)
	return nil
}
