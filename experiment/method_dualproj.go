package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// dualProjMethod is DualProj (torchjd; the projection of Lopez-Paz &
// Ranzato 2017): aggregate.DualProj on each particle's trunk.
var dualProjMethod = Method{
	Name:  "dualproj",
	Title: "DualProj",
	Help:  "no interaction: each trunk follows the mean of its task gradients projected onto the cone of directions that worsen no task (DualProj, torchjd); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.DualProj{} }),
	Heads: ownScore,
	Toy:   true,
}
