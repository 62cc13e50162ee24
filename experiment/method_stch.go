package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// stchMethod is smooth Tchebycheff scalarisation (Lin et al., ICML 2024)
// as LibMTL applies it: aggregate.STCH on each particle's trunk. It
// reads the task losses and the epochs, which the toy problems do not
// have.
var stchMethod = Method{
	Name:  "stch",
	Title: "STCH",
	Help:  "no interaction: each trunk follows the gradient of a log-sum-exp at temperature μ of its tasks' log losses over their means in a warm-up epoch, the summed log losses until then (STCH, Lin et al. 2024); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(p RuleParams) aggregate.Aggregator {
		warmup := int(p.Param("warmup", aggregate.DefaultSTCHWarmup))
		if warmup == 0 {
			warmup = -1 // aggregate.STCH's no warm-up epochs
		}
		return &aggregate.STCH{Mu: p.Param("mu", aggregate.DefaultSTCHMu), Warmup: warmup}
	}),
	Heads: ownScore,
	Params: []Param{
		{Name: "mu", Default: aggregate.DefaultSTCHMu, Min: 1e-3, Max: 1e3, Help: "the temperature μ of the smoothed maximum"},
		{Name: "warmup", Default: aggregate.DefaultSTCHWarmup, Min: 0, Max: 1000, Whole: true, Help: "the epochs of summed log losses before the epoch that averages the nadir losses"},
	},
}
