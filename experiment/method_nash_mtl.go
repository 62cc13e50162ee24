package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// nashMTLMethod is Nash-MTL (Navon et al., ICML 2022): aggregate.NashMTL
// on each particle's trunk.
var nashMTLMethod = Method{
	Name:  "nash-mtl",
	Title: "Nash-MTL",
	Help:  "no interaction: each trunk follows the Nash bargaining combination of its task gradients, α solving αᵢ(GGᵀα)ᵢ = 1 (Nash-MTL, Navon et al. 2022); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.NashMTL{} }),
	Heads: ownScore,
	Toy:   true,
}
