package experiment

import "testing"

// single: no shared trunk; each task's network along its own score.
func init() {
	stepCases["single"] = methodCase{
		declares: declared{compared: true},
		direction: func(t *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			if len(o.trunks[0]) != 0 {
				t.Fatalf("single has a shared trunk of %d parameters", len(o.trunks[0]))
			}
			return o.trunkMix(nil), o.ownHeadScores()
		},
	}
}
