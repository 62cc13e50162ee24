package experiment

import (
	"math"
	"testing"
)

// mgda: each trunk along the min-norm point of its two task scores, in
// closed form γ·s1 + (1−γ)·s2 with γ = clamp((s2−s1)·s2/‖s1−s2‖², 0, 1)
// (Sener & Koltun, Algorithm 1); each head along its own task's score.
func init() {
	stepCases["mgda"] = methodCase{
		declares: declared{toy: true, compared: true},
		direction: func(_ *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			gamma := make([]float64, o.m)
			for i := range o.m {
				s1, s2 := o.trunkScores[0][i], o.trunkScores[1][i]
				num, den := 0.0, 0.0
				for d := range s1 {
					num += (s2[d] - s1[d]) * s2[d]
					den += (s1[d] - s2[d]) * (s1[d] - s2[d])
				}
				gamma[i] = math.Max(0, math.Min(1, num/den))
			}
			return o.trunkMix(func(i, j int) float64 {
				if j == 0 {
					return gamma[i]
				}
				return 1 - gamma[i]
			}), o.ownHeadScores()
		},
	}
}
