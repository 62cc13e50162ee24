package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// uw: each trunk along its gradients weighted by uncertainty weighting's initial ½e^(−s), computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["uw"] = aggregatedCase(false, func() aggregate.Aggregator { return &aggregate.UncertaintyWeighting{} })
}
