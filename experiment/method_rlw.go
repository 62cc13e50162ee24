package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// rlwMethod is random loss weighting (Lin et al., TMLR 2022):
// aggregate.RLW on each particle's trunk.
var rlwMethod = Method{
	Name:  "rlw",
	Title: "RLW",
	Help:  "no interaction: each trunk follows its task gradients weighted softmax(z), z ~ N(0, I) drawn every step (RLW, Lin et al. 2022); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return aggregate.RLW{} }),
	Heads: ownScore,
	Toy:   true,
}
