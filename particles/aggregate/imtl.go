package aggregate

import (
	"fmt"
	"math"
)

// DefaultIMTLRate is the SGD step size of IMTL's loss scales by default.
const DefaultIMTLRate = 0.01

// IMTL is impartial multi-task learning in its hybrid form (Liu et al.,
// "Towards Impartial Multi-task Learning", ICLR 2021, as LibMTL's IMTL
// combines them): IMTL-L scales task k's loss to e^(sₖ)Lₖ − sₖ, and
// IMTL-G (IMTLG) combines the scaled losses' gradients hₖ = e^(sₖ)gₖ:
//
//	d = IMTL-G(h₁, …, h_K),
//	sₖ ← sₖ − LearningRate·(e^(sₖ)Lₖ − 1),
//
// the second line a step of SGD on the scaled losses in s, taken after
// the direction. Its fixed point sₖ = −log Lₖ makes every scaled loss 1,
// the paper's loss balance. s starts at 0, so the first step
// is IMTL-G's on the raw gradients. LibMTL learns s with the network's
// own optimiser; here s has an SGD step of its own, LearningRate (0:
// DefaultIMTLRate), as uncertainty weighting's s has. A step where
// IMTL-G's direction is undefined (an error wrapping ErrUndefined)
// leaves s as it was.
//
// Sign and scale: the gradients are loss gradients and d is a descent
// direction for θ ← θ − lr·d; IMTL-G's weights sum to 1, so d is on the
// scale of the mean of the scaled gradients; negating G negates h and d,
// and s moves with the losses alone.
//
// The state (Stateful) is K, then s. It computes on the host (on a GPU
// host, from the gradients copied there), in O(K²d) operations.
type IMTL struct {
	LearningRate float64

	scales []float64 // s, nil before the first step
	scaled [][]float64
	g      IMTLG
}

// Aggregate implements Aggregator.
func (a *IMTL) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, true)
	if err != nil {
		return fmt.Errorf("imtl: %w", err)
	}
	if err := checkAtLeast(s.Losses, 0, false, "loss of task"); err != nil {
		return fmt.Errorf("imtl: %w", err)
	}
	if err := checkTaskCount(len(a.scales), k); err != nil {
		return fmt.Errorf("imtl: %w", err)
	}
	rate := a.LearningRate
	if rate == 0 {
		rate = DefaultIMTLRate
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return fmt.Errorf("imtl: learning rate %v, want a positive number", rate)
	}
	scales := a.scales
	if scales == nil {
		scales = make([]float64, k)
	}
	if len(a.scaled) != k {
		a.scaled = make([][]float64, k)
	}
	for i, row := range g {
		a.scaled[i] = growFloats(a.scaled[i], len(row))
		f := math.Exp(scales[i])
		for x, v := range row {
			a.scaled[i][x] = f * v
		}
	}
	if err := a.g.Aggregate(dst, a.scaled, s); err != nil {
		return fmt.Errorf("imtl: %w", err)
	}
	for i, l := range s.Losses {
		scales[i] -= rate * (math.Exp(scales[i])*l - 1)
	}
	a.scales = scales
	return nil
}

// State implements Stateful: K, then s; nothing before the first step.
func (a *IMTL) State() []float64 {
	if a.scales == nil {
		return nil
	}
	return append([]float64{float64(len(a.scales))}, a.scales...)
}

// SetState implements Stateful.
func (a *IMTL) SetState(state []float64) error {
	k, err := weightingStateTasks(state, 0, 1)
	if err != nil {
		return fmt.Errorf("imtl: %w", err)
	}
	if k == 0 {
		a.scales = nil
		return nil
	}
	a.scales = append([]float64(nil), state[1:]...)
	return nil
}
