package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// aligned-mtl: each trunk along Aligned-MTL's direction, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["aligned-mtl"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.AlignedMTL{} })
}
