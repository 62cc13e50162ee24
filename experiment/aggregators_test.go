package experiment

import (
	"testing"

	"github.com/mtsgd/mtsgd/particles/aggregate"
)

// aggregated is the trunk direction of a method of package aggregate,
// computed from the step's scores without particles.Aggregated: each
// particle's aggregator (made by newAggregator) on its gradients (minus
// its scores) and losses at the run's first step, the direction minus
// what it returns.
func (o *oneStep) aggregated(t *testing.T, newAggregator func() aggregate.Aggregator) [][]float64 {
	t.Helper()
	dir := make([][]float64, o.m)
	for i := range o.m {
		g := make([][]float64, o.k)
		losses := make([]float64, o.k)
		for j := range o.k {
			g[j] = make([]float64, len(o.trunks[i]))
			for d, v := range o.trunkScores[j][i] {
				g[j][d] = -v
			}
			losses[j] = o.losses[j][i]
		}
		dir[i] = make([]float64, len(o.trunks[i]))
		s := aggregate.Step{Losses: losses, Index: 0, StepsPerEpoch: o.stepsPerEpoch, Seed: testSettings(1).Seed, Particle: i}
		if err := newAggregator().Aggregate(dir[i], g, s); err != nil {
			t.Fatal(err)
		}
		for d, v := range dir[i] {
			dir[i][d] = -v
		}
	}
	return dir
}

// aggregatedCase is the step case of a method of package aggregate:
// its trunks along the aggregator's direction, each head along its own
// task's score.
func aggregatedCase(toy bool, newAggregator func() aggregate.Aggregator) methodCase {
	return methodCase{
		declares: declared{toy: toy},
		direction: func(t *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			return o.aggregated(t, newAggregator), o.ownHeadScores()
		},
	}
}
