package experiment

import (
	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/aggregate"
)

// aggregatedTrunk is the Trunk of a method of package aggregate: every
// particle's trunk moves by its own aggregator, made by newAggregator
// from the run's parameters, over its K task scores (particles.Aggregated);
// heads follow their own task's score (ownScore), as under linear
// scalarisation.
func aggregatedTrunk(newAggregator func(RuleParams) aggregate.Aggregator) func(RuleParams) (particles.Rule, error) {
	return func(p RuleParams) (particles.Rule, error) {
		return &particles.Aggregated{
			New:       func() aggregate.Aggregator { return newAggregator(p) },
			Particles: p.Particles, Seed: p.Seed, StepsPerEpoch: p.StepsPerEpoch,
		}, nil
	}
}

// onHost is the sentence every aggregated method's help ends with.
const onHost = "; on a GPU host its direction is computed on the host"
