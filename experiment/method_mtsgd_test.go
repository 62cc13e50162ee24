package experiment

import (
	"testing"

	"github.com/mtsgd/mtsgd/particles"
)

// mtsgd: the trunks by particles.MTSGD (tested by hand in package
// particles) with U's four terms, each task's heads by SVGD; kernel scale
// and repulsion 1.
func init() {
	stepCases["mtsgd"] = methodCase{
		declares: declared{kernels: true, presets: true, toy: true, compared: true},
		direction: func(t *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			rule := &particles.MTSGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
			return o.trunkRule(t, rule), o.svgdHeads(t)
		},
	}
}
