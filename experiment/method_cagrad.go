package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// cagradMethod is CAGrad (Liu et al., NeurIPS 2021): aggregate.CAGrad
// on each particle's trunk, c its -cagrad-c.
var cagradMethod = Method{
	Name:  "cagrad",
	Title: "CAGrad",
	Help:  "no interaction: each trunk follows the direction within c·‖mean gradient‖ of the mean gradient that most improves the worst task (CAGrad, Liu et al. 2021); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		c := p.Param("c", aggregate.DefaultCAGradC)
		if c == 0 {
			c = -1 // aggregate.CAGrad's c = 0
		}
		return &aggregate.CAGrad{C: c}
	}),
	Heads:  ownScore,
	Toy:    true,
	Params: []Param{{Name: "c", Default: aggregate.DefaultCAGradC, Min: 0, Max: 100, Help: "the radius of the ball around the mean gradient, relative to its norm (0: the mean)"}},
}
