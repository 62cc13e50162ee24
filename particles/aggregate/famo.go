package aggregate

import (
	"fmt"
	"math"
)

// FAMO, fast adaptive multitask optimisation, descends the log losses
// with task weights tuned so that the tasks' log losses fall at the same
// rate (Liu, Feng, Stone & Liu, "FAMO: Fast adaptive multitask
// optimization", NeurIPS 2023, Algorithm 1 and Appendix C), following
// the official code (famo.py) and LibMTL (weighting/FAMO.py).
//
// With task logits ξ (0 at the start) and z = softmax(ξ), the direction
// is the gradient of Σₖ zₖ log Lₖ / Σⱼ(zⱼ/Lⱼ):
//
//	d = Σₖ cₖ gₖ,  cₖ = (zₖ/Lₖ) / Σⱼ (zⱼ/Lⱼ),
//
// on the scale of the mean of the task gradients (the cₖ sum to 1). The
// official code's offset by the tasks' minimum losses (0 by default)
// and its 1e-8 guard are left out: losses must be positive, and are
// taken as they are. The official code also clips the network's
// gradient to norm 1; that is the training loop's business, not done
// here.
//
// ξ learns from the change in the losses between the previous step and
// this one, δₖ = log Lₖ(prev) − log Lₖ(now) (positive where task k
// improved). At every step after the first, before d is written, ξ takes
// one Adam step (PyTorch's: β = (0.9, 0.999), ε = 1e-8, weight decay as
// an L2 term added to the gradient) on the gradient
//
//	Jᵀδ + γξ,  J = ∂z/∂ξ = diag(z) − zzᵀ,
//
// so ξ moves along −Jᵀδ, taking weight from the tasks that improved
// most, as in the official code, which hands Jᵀδ to a minimising Adam.
// The losses of step t come from another batch than those of step t−1,
// LibMTL's convention; the official code evaluates the batch of step t−1
// again after its update instead, which costs a forward pass.
//
// g rows are loss gradients and d is a descent direction (θ ← θ − lr·d).
// State is K, a flag (1 once a previous step's losses are kept), the
// Adam step count, then ξ, Adam's first and second moments and the
// previous losses (K values each). On a GPU host it runs on the host,
// on float64 gradients.
type FAMO struct {
	// LearningRate is Adam's step size on ξ; 0 means the paper's 0.025.
	LearningRate float64
	// WeightDecay is γ; 0 means 0.01, the official famo.py's default
	// (its experiments use other values per benchmark, down to 1e-5;
	// LibMTL defaults to 1e-3), and a negative value means none.
	WeightDecay float64

	logits     []float64 // ξ; nil before the first step
	moment1    []float64 // Adam's m
	moment2    []float64 // Adam's v
	adamSteps  int       // Adam's t
	prevLosses []float64
	havePrev   bool
}

const (
	famoDefaultRate  = 0.025
	famoDefaultDecay = 0.01
	famoBeta1        = 0.9
	famoBeta2        = 0.999
	famoEpsilon      = 1e-8
)

// famoLogitGradient writes Jᵀδ = z ⊙ (δ − zᵀδ), the gradient of
// δᵀ·softmax(ξ) in ξ, for z = softmax(ξ).
func famoLogitGradient(dst, z, delta []float64) {
	zd := 0.0
	for k := range z {
		zd += z[k] * delta[k]
	}
	for k := range z {
		dst[k] = z[k] * (delta[k] - zd)
	}
}

// Aggregate implements Aggregator.
func (f *FAMO) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, true)
	if err != nil {
		return fmt.Errorf("famo: %w", err)
	}
	if err := checkAtLeast(s.Losses, 0, true, "loss of task"); err != nil {
		return fmt.Errorf("famo: %w", err)
	}
	if err := checkTaskCount(len(f.logits), k); err != nil {
		return fmt.Errorf("famo: %w", err)
	}
	rate := f.LearningRate
	if rate == 0 {
		rate = famoDefaultRate
	}
	decay := f.WeightDecay
	switch {
	case decay == 0:
		decay = famoDefaultDecay
	case decay < 0:
		decay = 0
	}

	if f.logits == nil {
		f.logits = make([]float64, k)
		f.moment1 = make([]float64, k)
		f.moment2 = make([]float64, k)
		f.prevLosses = make([]float64, k)
	}
	z := make([]float64, k)
	if f.havePrev {
		delta := make([]float64, k)
		for i, l := range s.Losses {
			delta[i] = math.Log(f.prevLosses[i]) - math.Log(l)
		}
		softmaxInto(z, f.logits)
		grad := make([]float64, k)
		famoLogitGradient(grad, z, delta)
		f.adamStep(grad, rate, decay)
	}

	softmaxInto(z, f.logits)
	weights := z // cₖ, written over zₖ
	sum := 0.0
	for i, l := range s.Losses {
		weights[i] = z[i] / l
		sum += weights[i]
	}
	for i := range weights {
		weights[i] /= sum
	}
	writeWeightedSum(dst, weights, g)

	copy(f.prevLosses, s.Losses)
	f.havePrev = true
	return nil
}

// adamStep moves ξ by one step of PyTorch's Adam on grad + decay·ξ.
func (f *FAMO) adamStep(grad []float64, rate, decay float64) {
	f.adamSteps++
	t := float64(f.adamSteps)
	correction1 := 1 - math.Pow(famoBeta1, t)
	correction2 := 1 - math.Pow(famoBeta2, t)
	for i, gi := range grad {
		gi += decay * f.logits[i]
		f.moment1[i] = famoBeta1*f.moment1[i] + (1-famoBeta1)*gi
		f.moment2[i] = famoBeta2*f.moment2[i] + (1-famoBeta2)*gi*gi
		denom := math.Sqrt(f.moment2[i])/math.Sqrt(correction2) + famoEpsilon
		f.logits[i] -= rate / correction1 * f.moment1[i] / denom
	}
}

// State implements Stateful: K, the flag, the Adam step count, ξ, m, v
// and the previous losses.
func (f *FAMO) State() []float64 {
	if f.logits == nil {
		return nil
	}
	flag := 0.0
	if f.havePrev {
		flag = 1
	}
	state := []float64{float64(len(f.logits)), flag, float64(f.adamSteps)}
	state = append(state, f.logits...)
	state = append(state, f.moment1...)
	state = append(state, f.moment2...)
	return append(state, f.prevLosses...)
}

// SetState implements Stateful. It rejects a flag other than 0 or 1, a
// step count that is not a whole number, a negative second moment and,
// with the flag set, previous losses that are not positive.
func (f *FAMO) SetState(state []float64) error {
	k, err := weightingStateTasks(state, 2, 4)
	if err != nil {
		return fmt.Errorf("famo: %w", err)
	}
	if k == 0 {
		*f = FAMO{LearningRate: f.LearningRate, WeightDecay: f.WeightDecay}
		return nil
	}
	flag, steps := state[1], state[2]
	logits, m1, m2, prev := state[3:3+k], state[3+k:3+2*k], state[3+2*k:3+3*k], state[3+3*k:]
	if flag != 0 && flag != 1 {
		return fmt.Errorf("famo: state's flag is %v, want 0 or 1", flag)
	}
	if !isCount(steps) || steps > 1<<53 {
		return fmt.Errorf("famo: state's Adam step count %v is not a whole number", steps)
	}
	if err := checkAtLeast(m2, 0, false, "second moment of task"); err != nil {
		return fmt.Errorf("famo: state's %w", err)
	}
	if flag == 1 {
		if err := checkAtLeast(prev, 0, true, "previous loss of task"); err != nil {
			return fmt.Errorf("famo: state's %w", err)
		}
	}
	f.logits = append([]float64(nil), logits...)
	f.moment1 = append([]float64(nil), m1...)
	f.moment2 = append([]float64(nil), m2...)
	f.prevLosses = append([]float64(nil), prev...)
	f.adamSteps = int(steps)
	f.havePrev = flag == 1
	return nil
}
