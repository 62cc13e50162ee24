package experiment

import "github.com/mtsgd/mtsgd/particles"

// linearMethod is linear scalarisation with equal weights.
var linearMethod = Method{
	Name:  "linear",
	Help:  "no interaction: each trunk follows the mean of its task scores (weights 1/K), each head its own task's score",
	Trunk: func(RuleParams) (particles.Rule, error) { return &particles.Linear{}, nil },
	Heads: ownScore,
	Toy:   true, Compared: true,
}
