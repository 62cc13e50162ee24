package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// gradnorm: each trunk along its gradients weighted by GradNorm's initial weights, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["gradnorm"] = aggregatedCase(false, func() aggregate.Aggregator { return &aggregate.GradNorm{} })
}
