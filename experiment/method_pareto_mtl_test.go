package experiment

import (
	"testing"

	"github.com/mtsgd/mtsgd/particles"
)

// pareto-mtl: the trunks by particles.ParetoMTL (tested by hand in
// package particles) with M preferences and feasibility steps in the
// first two epochs, from the scores and the losses; each head along its
// own task's score.
func init() {
	stepCases["pareto-mtl"] = methodCase{
		declares: declared{compared: true},
		direction: func(t *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			prefs, err := particles.Preferences(o.m, o.k)
			if err != nil {
				t.Fatal(err)
			}
			rule := &particles.ParetoMTL{Prefs: prefs, InitSteps: 2 * o.stepsPerEpoch}
			return o.trunkRule(t, rule), o.ownHeadScores()
		},
	}
}
