package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// gls: each trunk along the gradient of the geometric mean of the task
// losses, computed by package aggregate from the step's gradients and
// losses (tested there against its references); each head along its own
// task's score.
func init() {
	stepCases["gls"] = aggregatedCase(false, func() aggregate.Aggregator { return &aggregate.GLS{} })
}
