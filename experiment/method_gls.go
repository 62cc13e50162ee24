package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// glsMethod is the geometric loss strategy (Chennupati et al., CVPR
// Workshops 2019): aggregate.GLS on each particle's trunk. It reads the
// task losses, which the toy problems do not give.
var glsMethod = Method{
	Name:  "gls",
	Title: "GLS",
	Help:  "no interaction: each trunk follows the gradient of the geometric mean of its task losses, each task gradient weighted by that mean over K times its loss (GLS, Chennupati et al. 2019); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.GLS{} }),
	Heads: ownScore,
}
