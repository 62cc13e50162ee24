package aggregate

import (
	"fmt"
	"math"
)

// UncertaintyWeighting weighs each task by a learned homoscedastic
// uncertainty (Kendall, Gal & Cipolla, "Multi-task learning using
// uncertainty to weigh losses for scene geometry and semantics", CVPR
// 2018, §3.2), in LibMTL's form (weighting/UW.py).
//
// Each task k has a learned log-variance sₖ = log σₖ², and the combined
// loss is
//
//	Σₖ ½·e^(−sₖ)·Lₖ + ½·sₖ,
//
// the paper's regression form L/(2σ²) + log σ with σ² = e^s, used for
// every task as LibMTL does; the paper's classification form
// e^(−s)·L + ½·s is not used. The direction is that loss's gradient in
// the shared parameters,
//
//	d = Σₖ wₖ gₖ,  wₖ = ½·e^(−sₖ),
//
// with s as it was before this step's update (the network and s step
// together from the same loss). The weights are not normalised: d is on
// the scale of the sum of the task gradients times ½e^(−s), about 0.82
// times the sum at the start.
//
// sₖ starts at −0.5, LibMTL's initial value (the paper does not give
// one). It is updated after d is written by plain gradient descent on
// the combined loss,
//
//	sₖ ← sₖ − LearningRate·(½ − ½·e^(−sₖ)·Lₖ),
//
// which drives sₖ towards log Lₖ. The paper and LibMTL train s with the
// network's optimiser; there is none here, so s has its own SGD rate.
// Losses must be finite and non-negative: with a negative loss the
// update has no fixed point and s runs off.
//
// g rows are loss gradients and d is a descent direction (θ ← θ − lr·d).
// State is K followed by s (K values). On a GPU host it runs on the
// host, on float64 gradients.
type UncertaintyWeighting struct {
	// LearningRate is the SGD step size of s; 0 means 0.01, with which s
	// settles on log L within a few hundred steps (its time constant
	// near the fixed point is 2/LearningRate steps).
	LearningRate float64

	logVar []float64 // s; nil before the first step
}

const (
	uncertaintyDefaultRate   = 0.01
	uncertaintyInitialLogVar = -0.5
)

// uncertaintyLoss is task k's term of the combined loss, ½e^(−s)L + ½s.
func uncertaintyLoss(s, loss float64) float64 { return 0.5*math.Exp(-s)*loss + 0.5*s }

// uncertaintyLossGradient is ∂/∂s of uncertaintyLoss, ½ − ½e^(−s)L.
func uncertaintyLossGradient(s, loss float64) float64 { return 0.5 - 0.5*math.Exp(-s)*loss }

// Aggregate implements Aggregator.
func (u *UncertaintyWeighting) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, true)
	if err != nil {
		return fmt.Errorf("uncertainty weighting: %w", err)
	}
	if err := checkAtLeast(s.Losses, 0, false, "loss of task"); err != nil {
		return fmt.Errorf("uncertainty weighting: %w", err)
	}
	if err := checkTaskCount(len(u.logVar), k); err != nil {
		return fmt.Errorf("uncertainty weighting: %w", err)
	}
	rate := u.LearningRate
	if rate == 0 {
		rate = uncertaintyDefaultRate
	}
	if u.logVar == nil {
		u.logVar = make([]float64, k)
		for i := range u.logVar {
			u.logVar[i] = uncertaintyInitialLogVar
		}
	}
	w := make([]float64, k)
	for i, sk := range u.logVar {
		w[i] = 0.5 * math.Exp(-sk)
	}
	writeWeightedSum(dst, w, g)
	for i, l := range s.Losses {
		u.logVar[i] -= rate * uncertaintyLossGradient(u.logVar[i], l)
	}
	return nil
}

// State implements Stateful: K, then s.
func (u *UncertaintyWeighting) State() []float64 {
	if u.logVar == nil {
		return nil
	}
	return append([]float64{float64(len(u.logVar))}, u.logVar...)
}

// SetState implements Stateful.
func (u *UncertaintyWeighting) SetState(state []float64) error {
	k, err := weightingStateTasks(state, 0, 1)
	if err != nil {
		return fmt.Errorf("uncertainty weighting: %w", err)
	}
	if k == 0 {
		u.logVar = nil
		return nil
	}
	u.logVar = append([]float64(nil), state[1:]...)
	return nil
}
