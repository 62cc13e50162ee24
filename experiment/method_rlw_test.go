package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// rlw: each trunk along its gradients weighted by RLW's draw for the run's seed, the particle and step 0, computed by package aggregate from the step's
// gradients and losses (tested there against its references); each head
// along its own task's score.
func init() {
	stepCases["rlw"] = aggregatedCase(true, func() aggregate.Aggregator { return aggregate.RLW{} })
}
