package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// cagrad: each trunk along CAGrad's direction at the default c = 0.4, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["cagrad"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.CAGrad{} })
}
