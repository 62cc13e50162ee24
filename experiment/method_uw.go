package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// uwMethod is uncertainty weighting (Kendall, Gal & Cipolla, CVPR 2018):
// aggregate.UncertaintyWeighting on each particle's trunk. It reads the
// task losses, which the toy problems do not give.
var uwMethod = Method{
	Name:  "uw",
	Title: "uncertainty weighting",
	Help:  "no interaction: each trunk follows its task gradients weighted ½e^(−s), s = log σ² learned per task and particle (uncertainty weighting, Kendall et al. 2018); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		return &aggregate.UncertaintyWeighting{LearningRate: p.Param("weight-lr", 0.01)}
	}),
	Heads:  ownScore,
	Params: []Param{{Name: "weight-lr", Default: 0.01, Min: 1e-12, Max: 10, Help: "the SGD step size of the log variances s"}},
}
