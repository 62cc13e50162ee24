package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// pcgradMethod is PCGrad (Yu et al., NeurIPS 2020): aggregate.PCGrad on
// each particle's trunk.
var pcgradMethod = Method{
	Name:  "pcgrad",
	Title: "PCGrad",
	Help:  "no interaction: each trunk follows the sum of its task gradients, each stripped of its conflicts with the others in a random order (PCGrad, Yu et al. 2020); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.PCGrad{} }),
	Heads: ownScore,
	Toy:   true,
}
