package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// alignedMTLMethod is Aligned-MTL (Senushkin et al., CVPR 2023):
// aggregate.AlignedMTL on each particle's trunk.
var alignedMTLMethod = Method{
	Name:  "aligned-mtl",
	Title: "Aligned-MTL",
	Help:  "no interaction: each trunk follows the sum of its task gradients aligned to an orthogonal system of equal norms (Aligned-MTL, Senushkin et al. 2023); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.AlignedMTL{} }),
	Heads: ownScore,
	Toy:   true,
}
