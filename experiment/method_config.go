package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// configMethod is ConFIG (Liu et al., ICLR 2025): aggregate.ConFIG on
// each particle's trunk.
var configMethod = Method{
	Name:  "config",
	Title: "ConFIG",
	Help:  "no interaction: each trunk follows the direction at equal angles to its task gradients, as long as the sum of their projections onto it (ConFIG, Liu et al. 2025); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.ConFIG{} }),
	Heads: ownScore,
	Toy:   true,
}
