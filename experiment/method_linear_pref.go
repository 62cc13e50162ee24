package experiment

import (
	"fmt"

	"github.com/mtsgd/mtsgd/particles"
)

// linearPrefMethod is linear scalarisation with one preference per
// particle (particles.PreferenceLinear).
var linearPrefMethod = Method{
	Name:  "linear-pref",
	Title: "linear, preference weights",
	Help:  "no interaction: particle i's trunk follows its task scores weighted (1 − i/(M−1), i/(M−1)), Pareto MTL's grid baseline and the authors' linear mode (two tasks only), each head its own task's score",
	Trunk: func(RuleParams) (particles.Rule, error) { return &particles.PreferenceLinear{}, nil },
	Heads: ownScore,
	Fits: func(s Settings, tasks int) error {
		switch {
		case s.Particles != 0 && s.Particles < 2:
			return fmt.Errorf("it spreads its particles over the trade-off of two tasks: it needs at least 2 particles, not %d", s.Particles)
		case tasks != 0 && tasks != 2:
			return fmt.Errorf("it weighs two tasks against each other: it needs exactly 2, not %d", tasks)
		}
		return nil
	},
}
