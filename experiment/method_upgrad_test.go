package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// upgrad: each trunk along UPGrad's direction, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["upgrad"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.UPGrad{} })
}
