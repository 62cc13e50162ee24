package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// gradVacMethod is GradVac (Wang et al., ICLR 2021): aggregate.GradVac on
// each particle's trunk, β its -gradvac-beta.
var gradVacMethod = Method{
	Name:  "gradvac",
	Title: "GradVac",
	Help:  "no interaction: each trunk follows the sum of its task gradients, each turned towards the others until their cosine reaches a moving average of past cosines (GradVac, Wang et al. 2021); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		beta := p.Param("beta", aggregate.DefaultGradVacBeta)
		if beta == 0 {
			beta = -1 // aggregate.GradVac's β = 0
		}
		return &aggregate.GradVac{Beta: beta}
	}),
	Heads:  ownScore,
	Toy:    true,
	Params: []Param{{Name: "beta", Default: aggregate.DefaultGradVacBeta, Min: 0, Max: 1, Help: "the decay β of the moving targets of the gradients' cosines (0: PCGrad)"}},
}
