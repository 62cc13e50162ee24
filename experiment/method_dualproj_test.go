package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// dualproj: each trunk along the mean gradient projected onto the
// gradients' dual cone, computed by package aggregate from the step's
// gradients (tested there against its references); each head along its
// own task's score.
func init() {
	stepCases["dualproj"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.DualProj{} })
}
