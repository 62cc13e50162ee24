package experiment

import "github.com/mtsgd/mtsgd/particles"

// mgdaMethod is MGDA (Sener & Koltun 2018): each particle on its own.
var mgdaMethod = Method{
	Name:  "mgda",
	Title: "MGDA",
	Help:  "no interaction: each trunk follows the min-norm combination of its task scores (Sener & Koltun), each head its own task's score",
	Trunk: func(RuleParams) (particles.Rule, error) { return &particles.MGDA{}, nil },
	Heads: ownScore,
	Toy:   true, Compared: true,
}
