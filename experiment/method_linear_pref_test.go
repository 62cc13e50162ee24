package experiment

import "testing"

// linear-pref: particle i of M's trunk along its task scores weighted
// 1 − i/(M−1) and i/(M−1) (closed form: with the test's 3 particles,
// (1, 0), (½, ½), (0, 1)), each head along its own task's score.
func init() {
	stepCases["linear-pref"] = methodCase{
		declares: declared{},
		direction: func(_ *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			return o.trunkMix(func(i, j int) float64 {
				second := float64(i) / float64(o.m-1)
				if j == 0 {
					return 1 - second
				}
				return second
			}), o.ownHeadScores()
		},
	}
}
