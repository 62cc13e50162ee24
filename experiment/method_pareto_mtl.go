package experiment

import "github.com/mtsgd/mtsgd/particles"

// Pareto MTL needs the objectives' values (the task losses), which the
// toy loop does not hand its rules, and is defined for two tasks only.
var paretoMTLMethod = Method{
	Name:  "pareto-mtl",
	Title: "Pareto MTL",
	Help:  "no interaction: Pareto MTL, particle i in the sub-region of preference i, feasibility steps in the budget's first two epochs (two tasks only)",
	Trunk: func(p RuleParams) (particles.Rule, error) {
		prefs, err := particles.Preferences(p.Particles, p.Tasks)
		if err != nil {
			return nil, err
		}
		return &particles.ParetoMTL{Prefs: prefs, InitSteps: 2 * p.StepsPerEpoch}, nil
	},
	Heads:    ownScore,
	Compared: true,
}
