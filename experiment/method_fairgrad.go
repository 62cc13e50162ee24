package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// fairGradMethod is FairGrad (Ban & Ji, ICML 2024): aggregate.FairGrad on
// each particle's trunk, α its -fairgrad-alpha.
var fairGradMethod = Method{
	Name:  "fairgrad",
	Title: "FairGrad",
	Help:  "no interaction: each trunk follows the combination of its task gradients that maximises the tasks' α-fair utility of their shares (FairGrad, Ban & Ji 2024; α = 1 is Nash-MTL); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		return &aggregate.FairGrad{Alpha: p.Param("alpha", aggregate.DefaultFairGradAlpha)}
	}),
	Heads:  ownScore,
	Toy:    true,
	Params: []Param{{Name: "alpha", Default: aggregate.DefaultFairGradAlpha, Min: 0.1, Max: 30, Help: "the fairness α of the tasks' utility (1: proportional fairness, Nash-MTL; larger: closer to max-min)"}},
}
