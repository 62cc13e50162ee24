package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// famoMethod is FAMO (Liu et al., NeurIPS 2023): aggregate.FAMO on each
// particle's trunk. It reads the task losses, which the toy problems do
// not give.
var famoMethod = Method{
	Name:  "famo",
	Title: "FAMO",
	Help:  "no interaction: each trunk follows its task gradients weighted to decrease every task's log loss at an equal rate, the weights' logits learned by Adam (FAMO, Liu et al. 2023); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		decay := p.Param("decay", 0.01)
		if decay == 0 {
			decay = -1 // aggregate.FAMO's γ = 0
		}
		return &aggregate.FAMO{LearningRate: p.Param("weight-lr", 0.025), WeightDecay: decay}
	}),
	Heads: ownScore,
	Params: []Param{
		{Name: "weight-lr", Default: 0.025, Min: 1e-12, Max: 10, Help: "Adam's step size on the task logits"},
		{Name: "decay", Default: 0.01, Min: 0, Max: 10, Help: "the weight decay γ of the task logits (0: none)"},
	},
}
