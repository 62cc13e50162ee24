package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// gradNormMethod is GradNorm (Chen et al., ICML 2018):
// aggregate.GradNorm on each particle's trunk. It reads the task losses,
// which the toy problems do not give.
var gradNormMethod = Method{
	Name:  "gradnorm",
	Title: "GradNorm",
	Help:  "no interaction: each trunk follows its task gradients weighted by weights learned to balance the tasks' gradient norms against their training rates (GradNorm, Chen et al. 2018); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		return &aggregate.GradNorm{Alpha: p.Param("alpha", 1.5), LearningRate: p.Param("weight-lr", 1e-3)}
	}),
	Heads: ownScore,
	Params: []Param{
		{Name: "alpha", Default: 1.5, Min: 1e-12, Max: 100, Help: "the strength α of the pull towards a common training rate"},
		{Name: "weight-lr", Default: 1e-3, Min: 1e-12, Max: 10, Help: "the SGD step size of the task weights"},
	},
}
