package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// upgradMethod is UPGrad (Quinton & Rey 2024, torchjd): aggregate.UPGrad
// on each particle's trunk.
var upgradMethod = Method{
	Name:  "upgrad",
	Title: "UPGrad",
	Help:  "no interaction: each trunk follows the mean of its task gradients each projected onto the cone of directions that worsen no task (UPGrad, Quinton & Rey 2024); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.UPGrad{} }),
	Heads: ownScore,
	Toy:   true,
}
