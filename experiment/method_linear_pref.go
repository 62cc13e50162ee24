package experiment

import "github.com/mtsgd/mtsgd/particles"

// linearPrefMethod is linear scalarisation with one preference per
// particle (particles.PreferenceLinear).
var linearPrefMethod = Method{
	Name:  "linear-pref",
	Title: "linear, preference weights",
	Help:  "no interaction: particle i's trunk follows its task scores weighted (1 − i/(M−1), i/(M−1)), Pareto MTL's grid baseline and the authors' linear mode (two tasks only), each head its own task's score",
	Trunk: func(RuleParams) (particles.Rule, error) { return &particles.PreferenceLinear{}, nil },
	Heads: ownScore,
}
