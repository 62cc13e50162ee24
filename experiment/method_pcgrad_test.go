package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// pcgrad: each trunk along PCGrad's sum of de-conflicted task gradients, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["pcgrad"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.PCGrad{} })
}
