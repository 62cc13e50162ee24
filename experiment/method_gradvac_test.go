package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// gradvac: each trunk along GradVac's sum of vaccinated task gradients,
// computed by package aggregate from the step's gradients (tested there
// against its references); each head along its own task's score.
func init() {
	stepCases["gradvac"] = aggregatedCase(true, func() aggregate.Aggregator { return &aggregate.GradVac{} })
}
