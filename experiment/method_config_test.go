package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// config: each trunk along ConFIG's direction, computed by package
// aggregate from the step's gradients (tested there against its
// references); each head along its own task's score.
func init() {
	stepCases["config"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.ConFIG{} })
}
