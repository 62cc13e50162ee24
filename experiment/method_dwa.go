package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// dwaMethod is dynamic weight average (Liu, Johns & Davison, CVPR 2019):
// aggregate.DWA on each particle's trunk. It reads the task losses and
// the epochs, which the toy problems do not have.
var dwaMethod = Method{
	Name:  "dwa",
	Title: "DWA",
	Help:  "no interaction: each trunk follows its task gradients weighted K·softmax of the last two epochs' loss ratios over T (DWA, Liu et al. 2019); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		return &aggregate.DWA{Temperature: p.Param("t", 2)}
	}),
	Heads:  ownScore,
	Params: []Param{{Name: "t", Default: 2, Min: 1e-6, Max: 1e6, Help: "the temperature T of the softmax"}},
}
