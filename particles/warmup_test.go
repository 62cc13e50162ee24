package particles

import (
	"math"
	"testing"
)

// The warm-up moves particle i along Σ_k w_ik s_ik / M, computed here by
// hand: with two tasks w_i = (i/(M−1), 1 − i/(M−1)), otherwise 1/K each;
// the positions play no part.
func TestWarmup(t *testing.T) {
	scores := [][][]float64{
		{{1, 2}, {3, 4}, {5, 6}},
		{{-1, 0}, {0, -1}, {2, 2}},
	}
	theta := [][]float64{{9, 9}, {-9, 9}, {0, 0}}
	for _, tc := range []struct {
		name   string
		scores [][][]float64
		want   [][]float64
	}{
		// M = 3: w = (0, 1), (½, ½), (1, 0).
		{"two tasks", scores, [][]float64{{-1.0 / 3, 0}, {1.5 / 3, 1.5 / 3}, {5.0 / 3, 6.0 / 3}}},
		// One task: weight 1 for every particle.
		{"one task", scores[:1], [][]float64{{1.0 / 3, 2.0 / 3}, {1, 4.0 / 3}, {5.0 / 3, 2}}},
		// Three tasks: 1/3 each.
		{"three tasks", append(scores, [][]float64{{3, 3}, {3, 3}, {3, 3}}), [][]float64{{1.0 / 3, 5.0 / 9}, {2.0 / 3, 2.0 / 3}, {10.0 / 9, 11.0 / 9}}},
	} {
		dst := [][]float64{{7, 7}, {7, 7}, {7, 7}} // overwritten, not added to
		if err := (Warmup{}).Direction(dst, Ensemble{Theta: theta, Scores: tc.scores}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range dst {
			for d := range dst[i] {
				if math.Abs(dst[i][d]-tc.want[i][d]) > 1e-15 {
					t.Errorf("%s: particle %d: %v, want %v", tc.name, i, dst[i], tc.want[i])
				}
			}
		}
	}
	if err := (Warmup{}).Direction([][]float64{{0}}, Ensemble{Theta: theta, Scores: scores}); err == nil {
		t.Error("a dst of the wrong shape was accepted")
	}
}
