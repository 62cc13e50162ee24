package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// nash-mtl: each trunk along Nash-MTL's bargaining direction, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["nash-mtl"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.NashMTL{} })
}
