package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// imtl-g: each trunk along IMTL-G's direction, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["imtl-g"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.IMTLG{} })
}
