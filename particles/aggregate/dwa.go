package aggregate

import (
	"errors"
	"fmt"
)

// DWA, dynamic weight average, weighs each task by how slowly its loss
// fell over the last epoch (Liu, Johns & Davison, "End-to-end
// multi-task learning with attention", CVPR 2019, §3.3), in the form of
// LibMTL (weighting/DWA.py) and the paper's code:
//
//	wₖ = K·softmax(r/T)ₖ,  rₖ = L̄ₖ(e−1) / L̄ₖ(e−2),
//
// where e is the step's epoch, Step.Index/Step.StepsPerEpoch, and L̄ₖ(e)
// the mean of task k's training losses over the steps of epoch e that
// this value saw. The weights are 1 in the first two epochs, and
// wherever the last two epochs are not both known (after a jump of more
// than one epoch between steps). Where L̄ₖ(e−2) is 0, rₖ is taken as 1.
//
//	d = Σₖ wₖ gₖ,
//
// on the scale of the sum of the task gradients (the weights sum to K).
// T defaults to the paper's 2.
//
// Steps must come in order of epoch; StepsPerEpoch must be positive
// and losses finite and non-negative. g rows are loss gradients and d is
// a descent direction (θ ← θ − lr·d). State is K, the current epoch, the
// number of steps seen in it, how many of the two epochs before it have
// known means (0, 1 or 2), the running sum of its losses (K values) and
// the means of the epochs before it, the last first (2K values). On a
// GPU host it runs on the host, on float64 gradients.
type DWA struct {
	// Temperature is T; 0 means the paper's 2. It must not be negative.
	Temperature float64

	sum      []float64 // Σ losses over the current epoch; nil before the first step
	count    int       // steps seen in the current epoch
	epoch    int       // the current epoch
	last     []float64 // L̄(epoch−1)
	lastBut1 []float64 // L̄(epoch−2)
	known    int       // how many of last and lastBut1 are known, in that order
}

const dwaDefaultTemperature = 2

// Aggregate implements Aggregator.
func (w *DWA) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, true)
	if err != nil {
		return fmt.Errorf("dwa: %w", err)
	}
	if err := checkAtLeast(s.Losses, 0, false, "loss of task"); err != nil {
		return fmt.Errorf("dwa: %w", err)
	}
	if err := checkTaskCount(len(w.sum), k); err != nil {
		return fmt.Errorf("dwa: %w", err)
	}
	if s.StepsPerEpoch <= 0 {
		return errors.New("dwa: needs epochs, but StepsPerEpoch is not positive")
	}
	if s.Index < 0 {
		return fmt.Errorf("dwa: step index %d is negative", s.Index)
	}
	temp := w.Temperature
	switch {
	case temp < 0:
		return fmt.Errorf("dwa: Temperature %v is negative", temp)
	case temp == 0:
		temp = dwaDefaultTemperature
	}
	epoch := s.Index / s.StepsPerEpoch
	if w.sum != nil && epoch < w.epoch {
		return fmt.Errorf("dwa: step %d is in epoch %d, before the current epoch %d", s.Index, epoch, w.epoch)
	}

	switch {
	case w.sum == nil:
		w.sum = make([]float64, k)
		w.last = make([]float64, k)
		w.lastBut1 = make([]float64, k)
		w.epoch, w.count, w.known = epoch, 0, 0
	case epoch == w.epoch+1 && w.count > 0:
		w.last, w.lastBut1 = w.lastBut1, w.last
		for i, v := range w.sum {
			w.last[i] = v / float64(w.count)
		}
		w.known = min(w.known+1, 2)
		clear(w.sum)
		w.epoch, w.count = epoch, 0
	case epoch > w.epoch:
		clear(w.sum)
		w.epoch, w.count, w.known = epoch, 0, 0
	}

	weights := make([]float64, k)
	if w.known == 2 {
		for i := range weights {
			r := 1.0
			if w.lastBut1[i] > 0 {
				r = w.last[i] / w.lastBut1[i]
			}
			weights[i] = r / temp
		}
		softmaxInto(weights, weights)
		for i := range weights {
			weights[i] *= float64(k)
		}
	} else {
		for i := range weights {
			weights[i] = 1
		}
	}
	writeWeightedSum(dst, weights, g)

	for i, l := range s.Losses {
		w.sum[i] += l
	}
	w.count++
	return nil
}

// State implements Stateful: K, the epoch, the step count, the known
// count, then the running sum, L̄(epoch−1) and L̄(epoch−2).
func (w *DWA) State() []float64 {
	if w.sum == nil {
		return nil
	}
	state := []float64{float64(len(w.sum)), float64(w.epoch), float64(w.count), float64(w.known)}
	state = append(state, w.sum...)
	state = append(state, w.last...)
	return append(state, w.lastBut1...)
}

// SetState implements Stateful. It rejects an epoch or step count that
// is not a whole number, a known count outside 0–2, and negative sums
// or means.
func (w *DWA) SetState(state []float64) error {
	k, err := weightingStateTasks(state, 3, 3)
	if err != nil {
		return fmt.Errorf("dwa: %w", err)
	}
	if k == 0 {
		*w = DWA{Temperature: w.Temperature}
		return nil
	}
	const maxCount = 1 << 53 // beyond it a float64 does not hold every integer
	epoch, count, known := state[1], state[2], state[3]
	if !isCount(epoch) || epoch > maxCount {
		return fmt.Errorf("dwa: state's epoch %v is not a whole number", epoch)
	}
	if !isCount(count) || count > maxCount {
		return fmt.Errorf("dwa: state's step count %v is not a whole number", count)
	}
	if known != 0 && known != 1 && known != 2 {
		return fmt.Errorf("dwa: state's known-epoch count %v is not 0, 1 or 2", known)
	}
	if err := checkAtLeast(state[4:], 0, false, "loss sum or mean"); err != nil {
		return fmt.Errorf("dwa: state's %w", err)
	}
	w.epoch, w.count, w.known = int(epoch), int(count), int(known)
	w.sum = append([]float64(nil), state[4:4+k]...)
	w.last = append([]float64(nil), state[4+k:4+2*k]...)
	w.lastBut1 = append([]float64(nil), state[4+2*k:]...)
	return nil
}
