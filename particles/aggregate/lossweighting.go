package aggregate

import (
	"errors"
	"fmt"
	"math"
)

// The loss weightings (UncertaintyWeighting, GradNorm, DWA, RLW, FAMO)
// share one shape: from the step's losses (and, for GradNorm, the
// gradients) they compute K task weights w and write d = Σₖ wₖ gₖ. The
// helpers below check their input, write that sum and lay out their
// state.

// checkWeightingInput checks that g holds K ≥ 1 rows of len(dst) finite
// values and, when needLosses, that s.Losses holds K finite values, and
// returns K. It checks everything a loss weighting reads before the
// weighting touches its state, so that a rejected step leaves the state
// as it was.
func checkWeightingInput(dst []float64, g [][]float64, s Step, needLosses bool) (int, error) {
	k := len(g)
	if k == 0 {
		return 0, errors.New("no task gradients (K = 0)")
	}
	for i, row := range g {
		if len(row) != len(dst) {
			return 0, fmt.Errorf("gradient of task %d has length %d, want %d (the length of dst)", i, len(row), len(dst))
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("gradient of task %d holds %v at %d", i, v, j)
			}
		}
	}
	if !needLosses {
		return k, nil
	}
	if len(s.Losses) != k {
		return 0, fmt.Errorf("%d losses for %d task gradients", len(s.Losses), k)
	}
	for i, l := range s.Losses {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return 0, fmt.Errorf("loss of task %d is %v", i, l)
		}
	}
	return k, nil
}

// checkAtLeast rejects a value below min (0 for the methods that need
// non-negative losses); strict rejects a value equal to min as well.
// what names the values in the error: "loss of task", say.
func checkAtLeast(values []float64, min float64, strict bool, what string) error {
	for i, v := range values {
		if v < min || (strict && v == min) {
			if strict {
				return fmt.Errorf("%s %d is %v, want > %v", what, i, v, min)
			}
			return fmt.Errorf("%s %d is %v, want ≥ %v", what, i, v, min)
		}
	}
	return nil
}

// writeWeightedSum writes dst = Σₖ w[k]·g[k].
func writeWeightedSum(dst []float64, w []float64, g [][]float64) {
	clear(dst)
	for k, row := range g {
		wk := w[k]
		for j, v := range row {
			dst[j] += wk * v
		}
	}
}

// softmaxInto writes dst = softmax(x), subtracting the largest entry
// first so that no exponential overflows. +Inf entries share the whole
// mass equally, the limit of the softmax as they grow.
func softmaxInto(dst, x []float64) {
	top := math.Inf(-1)
	for _, v := range x {
		top = max(top, v)
	}
	if math.IsInf(top, 1) {
		n := 0
		for _, v := range x {
			if math.IsInf(v, 1) {
				n++
			}
		}
		for i, v := range x {
			dst[i] = 0
			if math.IsInf(v, 1) {
				dst[i] = 1 / float64(n)
			}
		}
		return
	}
	sum := 0.0
	for i, v := range x {
		dst[i] = math.Exp(v - top)
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// The loss weightings' states share a layout: the task count K first
// (nothing at all before the first step), then fixed scalars, then
// blocks of K values. Keeping K in the state makes a wrong length
// detectable before the first step tells the value what K is.

// weightingStateTasks checks state's layout, 1 + fixed + perTask·K
// finite values with K = state[0] a positive integer, and returns K; an
// empty state returns 0, the state of a value before its first step.
func weightingStateTasks(state []float64, fixed, perTask int) (int, error) {
	if len(state) == 0 {
		return 0, nil
	}
	for i, v := range state {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("state holds %v at %d", v, i)
		}
	}
	kf := state[0]
	if kf < 1 || kf != math.Trunc(kf) || kf > float64(len(state)) {
		return 0, fmt.Errorf("state's task count %v is not a positive integer that fits its length %d", kf, len(state))
	}
	k := int(kf)
	if want := 1 + fixed + perTask*k; len(state) != want {
		return 0, fmt.Errorf("state has length %d, want %d for %d tasks", len(state), want, k)
	}
	return k, nil
}

// checkTaskCount rejects a step whose task count differs from the one
// the state was built for.
func checkTaskCount(have, got int) error {
	if have != 0 && have != got {
		return fmt.Errorf("%d task gradients, but the state holds %d tasks", got, have)
	}
	return nil
}

// isCount reports whether v is a non-negative integer.
func isCount(v float64) bool { return v >= 0 && v == math.Trunc(v) }
