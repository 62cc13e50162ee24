package experiment

import "github.com/mtsgd/mtsgd/particles"

// mooSVGDMethod is multi-objective SVGD (Liu, Tong & Liu 2021).
var mooSVGDMethod = Method{
	Name:  "moo-svgd",
	Title: "MOO-SVGD",
	Help:  "trunks by MOO-SVGD (per-particle min-norm, then SVGD, kernel on the trunks), each task's heads by SVGD",
	Trunk: func(p RuleParams) (particles.Rule, error) {
		return &particles.MOOSVGD{Kernel: kernel(p), Repulsion: p.Repulsion}, nil
	},
	Heads:   svgdHeads,
	Kernels: true, Toy: true, Compared: true,
}
