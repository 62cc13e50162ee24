package experiment

import (
	"testing"

	"github.com/mtsgd/mtsgd/particles"
)

// moo-svgd: the trunks by particles.MOOSVGD (tested by hand in package
// particles), each task's heads by SVGD; kernel scale and repulsion 1.
func init() {
	stepCases["moo-svgd"] = methodCase{
		declares: declared{kernels: true, toy: true, compared: true},
		direction: func(t *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			rule := &particles.MOOSVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
			return o.trunkRule(t, rule), o.svgdHeads(t)
		},
	}
}
