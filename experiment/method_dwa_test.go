package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// dwa: each trunk along its gradients weighted by DWA's first-epoch weights, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["dwa"] = aggregatedCase(false, func() aggregate.Aggregator { return &aggregate.DWA{} })
}
