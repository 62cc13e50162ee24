package experiment

import "github.com/mtsgd/mtsgd/particles"

// svgdMethod is plain SVGD on the tasks' product.
var svgdMethod = Method{
	Name:  "svgd",
	Title: "SVGD",
	Help:  "trunks by SVGD on the tasks' tempered product (weights 1/K), each task's heads by SVGD",
	Trunk: func(p RuleParams) (particles.Rule, error) {
		return &particles.SVGD{Kernel: kernel(p), Repulsion: p.Repulsion}, nil
	},
	Heads:   svgdHeads,
	Kernels: true, Toy: true,
}
