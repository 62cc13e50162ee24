package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// imtlMethod is impartial multi-task learning, IMTL-L and IMTL-G
// together (Liu et al., ICLR 2021): aggregate.IMTL on each particle's
// trunk. It reads the task losses, which the toy problems do not give.
var imtlMethod = Method{
	Name:  "imtl",
	Title: "IMTL",
	Help:  "no interaction: each trunk follows IMTL-G's combination of its task gradients scaled by e^s, s learned to bring every scaled loss e^s·L to 1 (IMTL, Liu et al. 2021); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		return &aggregate.IMTL{LearningRate: p.Param("weight-lr", aggregate.DefaultIMTLRate)}
	}),
	Heads:  ownScore,
	Params: []Param{{Name: "weight-lr", Default: aggregate.DefaultIMTLRate, Min: 1e-12, Max: 10, Help: "the SGD step size of the loss scales s"}},
}
