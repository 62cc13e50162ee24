package experiment

import "github.com/mtsgd/mtsgd/particles/aggregate"

// imtlGMethod is IMTL-G (Liu et al., ICLR 2021): aggregate.IMTLG on each
// particle's trunk.
var imtlGMethod = Method{
	Name:  "imtl-g",
	Title: "IMTL-G",
	Help:  "no interaction: each trunk follows the combination of its task gradients with equal projections onto every task's unit gradient (IMTL-G, Liu et al. 2021); each head its own task's score" + onHost,
	Trunk: aggregatedTrunk(func(RuleParams) aggregate.Aggregator { return &aggregate.IMTLG{} }),
	Heads: ownScore,
	Toy:   true,
}
