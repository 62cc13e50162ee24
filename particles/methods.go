package particles

import (
	"fmt"
	"strings"
)

// Config holds the settings a rule may use; each rule ignores the others.
type Config struct {
	Kernel    RBF       // kernel rules: mtsgd, svgd, moo-svgd
	Repulsion float64   // kernel rules: weight ρ of the kernel-gradient term
	Weights   []float64 // svgd, linear: fixed target weights (nil: equal)

	Preferences [][]float64 // pareto-mtl: one preference vector per particle
	InitSteps   int         // pareto-mtl: length of the feasibility phase
}

// Methods lists the rule names New accepts for any problem.
var Methods = []string{"mtsgd", "svgd", "moo-svgd", "mgda", "linear"}

// New returns the rule called name.
func New(name string, c Config) (Rule, error) {
	switch name {
	case "mtsgd":
		return &MTSGD{Kernel: c.Kernel, Repulsion: c.Repulsion}, nil
	case "svgd":
		return &SVGD{Kernel: c.Kernel, Repulsion: c.Repulsion, Weights: c.Weights}, nil
	case "moo-svgd":
		return &MOOSVGD{Kernel: c.Kernel, Repulsion: c.Repulsion}, nil
	case "mgda":
		return &MGDA{}, nil
	case "linear":
		return &Linear{Weights: c.Weights}, nil
	case "pareto-mtl":
		return &ParetoMTL{Prefs: c.Preferences, InitSteps: c.InitSteps}, nil
	}
	return nil, fmt.Errorf("unknown method %q (available: %s)", name, strings.Join(Methods, ", "))
}
