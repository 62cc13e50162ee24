package experiment

import "testing"

// linear: each trunk along the mean of its two task scores (closed form),
// each head along its own task's score.
func init() {
	stepCases["linear"] = methodCase{
		declares: declared{toy: true, compared: true},
		direction: func(_ *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			return o.trunkMix(func(int, int) float64 { return 0.5 }), o.ownHeadScores()
		},
	}
}
