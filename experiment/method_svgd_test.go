package experiment

import (
	"testing"

	"github.com/mtsgd/mtsgd/particles"
)

// svgd: the trunks by particles.SVGD on all the tasks' scores (tested by
// hand in package particles), each task's heads by SVGD; kernel scale
// and repulsion 1.
func init() {
	stepCases["svgd"] = methodCase{
		declares: declared{kernels: true, toy: true},
		direction: func(t *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			rule := &particles.SVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
			return o.trunkRule(t, rule), o.svgdHeads(t)
		},
	}
}
