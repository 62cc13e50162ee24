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

// Memory is a lower bound on the bytes the rule called name keeps between
// steps for m particles of dimension d. The kernel rules (mtsgd, svgd,
// moo-svgd) keep the M×M kernel and squared-distance matrices, the M(M−1)/2
// pair distances the median heuristic sorts, and three vectors per
// particle (repulsion, smoothed and combined scores): at M = 100,000 the
// matrices alone are 200 GB. The others keep at most one vector per
// particle, counted as none.
func Memory(name string, m, d int) float64 {
	switch name {
	case "mtsgd", "svgd", "moo-svgd":
		mf := float64(m)
		return 8 * (2.5*mf*mf + 3*mf*float64(d))
	}
	return 0
}
