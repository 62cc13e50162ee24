package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// famo: each trunk along FAMO's first-step combination, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["famo"] = aggregatedCase(false, func() aggregate.Aggregator { return &aggregate.FAMO{} })
}
