package aggregate

import (
	"fmt"
	"math"
)

// GLS is the geometric loss strategy (Chennupati, Sistu, Yogamani &
// Rawashdeh, "MultiNet++: Multi-Stream Feature Aggregation and Geometric
// Loss Strategy for Multi-Task Learning", CVPR Workshops 2019, as
// LibMTL's GLS computes it): the tasks' losses are combined by their geometric mean,
// L = (Πₖ Lₖ)^(1/K), whose gradient weighs each task's gradient by
//
//	wₖ = ∂L/∂Lₖ = L / (K·Lₖ),  d = Σₖ wₖ gₖ,
//
// so a task whose loss is small gets a large weight: the combination
// cares about the losses' ratios, not their scales (multiplying every
// loss by c leaves w unchanged). The weights are computed through logs,
// wₖ = exp(mean log L − log Lₖ)/K, so that no product of many losses
// overflows or underflows. Every loss must be positive: the geometric
// mean of losses one of which is 0 has no gradient.
//
// Sign and scale: the gradients are loss gradients and d is a descent
// direction for θ ← θ − lr·d; with equal losses d is the mean of the task
// gradients, as LibMTL's backward of the geometric mean gives.
//
// GLS has no parameters and no state: its zero value is ready to use.
// On a GPU host it runs on the host, on float64 gradients.
type GLS struct {
	w []float64
}

// Aggregate implements Aggregator.
func (a *GLS) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, err := checkWeightingInput(dst, g, s, true)
	if err != nil {
		return fmt.Errorf("gls: %w", err)
	}
	if err := checkAtLeast(s.Losses, 0, true, "loss of task"); err != nil {
		return fmt.Errorf("gls: %w", err)
	}
	meanLog := 0.0
	for _, l := range s.Losses {
		meanLog += math.Log(l) / float64(k)
	}
	a.w = growFloats(a.w, k)
	for i, l := range s.Losses {
		a.w[i] = math.Exp(meanLog-math.Log(l)) / float64(k)
	}
	writeWeightedSum(dst, a.w, g)
	return nil
}
