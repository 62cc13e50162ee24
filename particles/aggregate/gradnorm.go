package aggregate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// GradNorm balances the tasks' training rates by tuning task weights so
// that the weighted gradients' norms follow the tasks' relative progress
// (Chen, Badrinarayanan, Lee & Rabinovich, "GradNorm: Gradient
// normalization for adaptive loss balancing in deep multitask
// networks", ICML 2018, Algorithm 1), following the paper's direct
// parametrisation of the weights (LibMTL, weighting/GradNorm.py, writes
// w = K·softmax(ξ) and trains ξ with the network's optimiser).
//
// With weights w (all 1 at the start), at each step:
//
//	Gₖ = ‖wₖ gₖ‖ over all the shared parameters (as LibMTL does; the
//	     paper uses the last shared layer),
//	Ḡ  = meanₖ Gₖ,
//	r̃ₖ = Lₖ / Lₖ(0),  rₖ = r̃ₖ / meanⱼ r̃ⱼ,
//	L_grad = Σₖ |Gₖ − Ḡ·rₖ^α|,
//
// with the targets Ḡ·rₖ^α held constant, and one gradient step
//
//	wₖ ← wₖ − LearningRate·sign(Gₖ − Ḡ·rₖ^α)·‖gₖ‖,
//
// (∂L_grad/∂wₖ for wₖ > 0), after which w is renormalised to Σ w = K.
// The direction uses the weights before the update,
//
//	d = Σₖ wₖ gₖ,
//
// on the scale of the sum of the task gradients (the weights sum to K).
// Lₖ(0) is the loss of the first step this value sees; LibMTL uses the
// first epoch's mean training loss instead and trains with equal
// weights during that epoch. Where every loss is 0, r̃ has no mean to
// divide by and all rₖ are taken as 1 (equal progress).
//
// A step that would take a weight to or below zero leaves it at 1e-3
// before the renormalisation: ‖wₖ gₖ‖ has no gradient in wₖ at 0, so a
// zero weight would silence its task for good, and a negative one would
// flip its gradient. The paper says nothing of this case.
//
// Losses must be finite and non-negative, and those of the first step
// positive. g rows are loss gradients and d is a descent direction
// (θ ← θ − lr·d). State is K, a flag (1 once L(0) is set), w (K values)
// and L(0) (K values). On a GPU host it runs on the host, on float64
// gradients.
type GradNorm struct {
	// Alpha is the strength α of the pull towards a common training
	// rate; 0 means the paper's 1.5. It must not be negative.
	Alpha float64
	// LearningRate is the SGD step size of w; 0 means 1e-3. The paper
	// updates w with the network's optimiser and learning rate; there
	// is none here, so w has its own rate, on the scale of common
	// network rates.
	LearningRate float64

	weights       []float64 // w; nil before the first step
	initialLosses []float64 // L(0)
	haveInitial   bool
}

const (
	gradNormDefaultAlpha = 1.5
	gradNormDefaultRate  = 1e-3
	// gradNormMinWeight is where a weight that the step would take to
	// or below zero is held.
	gradNormMinWeight = 1e-3
)

// gradNormLoss is L_grad = Σₖ |wₖ·normₖ − targetₖ| for non-negative w.
func gradNormLoss(w, norms, targets []float64) float64 {
	l := 0.0
	for k := range w {
		l += math.Abs(w[k]*norms[k] - targets[k])
	}
	return l
}

// gradNormLossGradient writes ∂L_grad/∂w for positive w, the targets
// held constant: sign(wₖ·normₖ − targetₖ)·normₖ, with sign(0) = 0.
func gradNormLossGradient(dst, w, norms, targets []float64) {
	for k := range w {
		diff := w[k]*norms[k] - targets[k]
		switch {
		case diff > 0:
			dst[k] = norms[k]
		case diff < 0:
			dst[k] = -norms[k]
		default:
			dst[k] = 0
		}
	}
}

// Aggregate implements Aggregator.
func (gn *GradNorm) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, true)
	if err != nil {
		return fmt.Errorf("gradnorm: %w", err)
	}
	if err := checkAtLeast(s.Losses, 0, false, "loss of task"); err != nil {
		return fmt.Errorf("gradnorm: %w", err)
	}
	if err := checkTaskCount(len(gn.weights), k); err != nil {
		return fmt.Errorf("gradnorm: %w", err)
	}
	if !gn.haveInitial {
		if err := checkAtLeast(s.Losses, 0, true, "loss of task"); err != nil {
			return fmt.Errorf("gradnorm: the first step's losses set L(0): %w", err)
		}
	}
	alpha := gn.Alpha
	switch {
	case alpha < 0:
		return fmt.Errorf("gradnorm: Alpha %v is negative", alpha)
	case alpha == 0:
		alpha = gradNormDefaultAlpha
	}
	rate := gn.LearningRate
	if rate == 0 {
		rate = gradNormDefaultRate
	}

	if gn.weights == nil {
		gn.weights = make([]float64, k)
		for i := range gn.weights {
			gn.weights[i] = 1
		}
		gn.initialLosses = make([]float64, k)
	}
	if !gn.haveInitial {
		copy(gn.initialLosses, s.Losses)
		gn.haveInitial = true
	}
	w := gn.weights
	norms := make([]float64, k)
	meanNorm := 0.0
	for i, row := range g {
		norms[i] = floats.Norm(row, 2)
		meanNorm += w[i] * norms[i]
	}
	meanNorm /= float64(k)
	writeWeightedSum(dst, w, g)
	rates := make([]float64, k)
	meanRate := 0.0
	for i, l := range s.Losses {
		rates[i] = l / gn.initialLosses[i]
		meanRate += rates[i]
	}
	meanRate /= float64(k)
	targets := make([]float64, k)
	for i := range targets {
		r := 1.0
		if meanRate > 0 {
			r = rates[i] / meanRate
		}
		targets[i] = meanNorm * math.Pow(r, alpha)
	}

	grad := make([]float64, k)
	gradNormLossGradient(grad, w, norms, targets)
	sum := 0.0
	for i := range w {
		w[i] -= rate * grad[i]
		if !(w[i] > 0) {
			w[i] = gradNormMinWeight
		}
		sum += w[i]
	}
	for i := range w {
		w[i] *= float64(k) / sum
	}
	return nil
}

// State implements Stateful: K, the flag, w, L(0).
func (gn *GradNorm) State() []float64 {
	if gn.weights == nil {
		return nil
	}
	flag := 0.0
	if gn.haveInitial {
		flag = 1
	}
	state := append([]float64{float64(len(gn.weights)), flag}, gn.weights...)
	return append(state, gn.initialLosses...)
}

// SetState implements Stateful. It rejects weights that are not
// positive, a flag other than 0 or 1, and, with the flag set, initial
// losses that are not positive.
func (gn *GradNorm) SetState(state []float64) error {
	k, err := weightingStateTasks(state, 1, 2)
	if err != nil {
		return fmt.Errorf("gradnorm: %w", err)
	}
	if k == 0 {
		*gn = GradNorm{Alpha: gn.Alpha, LearningRate: gn.LearningRate}
		return nil
	}
	flag, w, l0 := state[1], state[2:2+k], state[2+k:]
	if flag != 0 && flag != 1 {
		return fmt.Errorf("gradnorm: state's flag is %v, want 0 or 1", flag)
	}
	for i, v := range w {
		if !(v > 0) {
			return fmt.Errorf("gradnorm: state's weight %d is %v, want > 0", i, v)
		}
	}
	if flag == 1 {
		if err := checkAtLeast(l0, 0, true, "initial loss of task"); err != nil {
			return fmt.Errorf("gradnorm: state's L(0): %w", err)
		}
	}
	gn.weights = append([]float64(nil), w...)
	gn.initialLosses = append([]float64(nil), l0...)
	gn.haveInitial = flag == 1
	return nil
}
