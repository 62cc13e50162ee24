package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// imtl: each trunk along IMTL-G's combination of its gradients scaled by
// the loss scales (1 at the first step), computed by package aggregate
// from the step's gradients and losses (tested there against its
// references); each head along its own task's score.
func init() {
	stepCases["imtl"] = aggregatedCase(false, func() aggregate.Aggregator { return &aggregate.IMTL{} })
}
