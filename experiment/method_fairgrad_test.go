package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// fairgrad: each trunk along FairGrad's α-fair combination, computed by
// package aggregate from the step's gradients (tested there against its
// references); each head along its own task's score.
func init() {
	stepCases["fairgrad"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.FairGrad{} })
}
