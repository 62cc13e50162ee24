package experiment

import "github.com/mtsgd/mtsgd/particles"

// mtsgdMethod is the paper's method, MT-SGD (Phan et al., NeurIPS 2022).
var mtsgdMethod = Method{
	Name:  "mtsgd",
	Title: "MT-SGD",
	Help:  "trunks by MT-SGD (one min-norm QP for the whole ensemble, kernel on the trunks), each task's heads by SVGD; takes -preset",
	Trunk: func(p RuleParams) (particles.Rule, error) {
		return &particles.MTSGD{Kernel: kernel(p), Repulsion: p.Repulsion, FirstTermOnly: p.UTerms.FirstOnly()}, nil
	},
	Heads:   svgdHeads,
	Kernels: true, Presets: true, Toy: true, Compared: true,
}
