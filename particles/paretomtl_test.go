package particles

import (
	"math"
	"testing"
)

// Lin et al.'s preference vectors for 2 tasks and 5 particles: unit vectors
// at 0°, 22.5°, 45°, 67.5° and 90°.
func TestPreferences(t *testing.T) {
	p, err := Preferences(5, 2)
	if err != nil {
		t.Fatal(err)
	}
	c, s := math.Cos(math.Pi/8), math.Sin(math.Pi/8)
	want := [][]float64{{1, 0}, {c, s}, {math.Sqrt2 / 2, math.Sqrt2 / 2}, {s, c}, {0, 1}}
	for i := range want {
		for k := range 2 {
			if math.Abs(p[i][k]-want[i][k]) > 1e-15 {
				t.Errorf("preference %d = %v, want %v", i, p[i], want[i])
			}
		}
	}
	if _, err := Preferences(5, 3); err == nil {
		t.Error("3 tasks accepted")
	}
}

// Hand-worked steps with two particles, preferences (1,0) and (0,1), and
// orthogonal unit scores s1 = (1,0), s2 = (0,1) at every particle.
func TestParetoMTLByHand(t *testing.T) {
	prefs := [][]float64{{1, 0}, {0, 1}}
	scores := [][][]float64{{{1, 0}, {1, 0}}, {{0, 1}, {0, 1}}}
	theta := [][]float64{{0, 0}, {0, 0}}
	for _, tc := range []struct {
		name   string
		values [][]float64 // [k][m]
		init   int
		want   [][]float64
	}{
		// F = (1,1) at both: G = (u_j − u_i)·F/‖F‖ = 0, no constraint is
		// active, and the step is MGDA's: the min-norm point of s1, s2 is
		// their average, normalised to |a| sum 1: (½, ½).
		{"feasible: MGDA", [][]float64{{1, 1}, {1, 1}}, 0, [][]float64{{0.5, 0.5}, {0.5, 0.5}}},
		// Particle 0 (preference (1,0)) at F = (1,3): G = (−1·1 + 1·3)/‖F‖
		// > 0, active. Feasibility phase: descend G alone, a = u_1 − u_0 =
		// (−1, 1), direction −s1 + s2 = (−1, 1). Particle 1 at F = (1,3):
		// G = (1·1 − 1·3)/‖F‖ < 0, feasible, so its step is MGDA's.
		{"feasibility phase", [][]float64{{1, 1}, {3, 3}}, 1, [][]float64{{-1, 1}, {0.5, 0.5}}},
		// After the phase, particle 0 solves the min-norm problem over the
		// hull of {s1, s2, s2 − s1} = {(1,0), (0,1), (−1,1)}: points
		// (λ1 − β, λ2 + β). With λ2 = 0, λ1 = 1 − β the norm² is
		// (1 − 2β)² + β², least at β = 0.4: the point (0.2, 0.4), norm²
		// 0.2 (any λ2 > 0 does worse). So a = (λ1 − β, β) = (0.2, 0.4),
		// normalised to (1/3, 2/3): more weight on the task whose loss is
		// too large for this particle's preference.
		{"constrained step", [][]float64{{1, 1}, {3, 3}}, 0, [][]float64{{1.0 / 3, 2.0 / 3}, {0.5, 0.5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &ParetoMTL{Prefs: prefs, InitSteps: tc.init}
			dst := [][]float64{{9, 9}, {9, 9}}
			if err := r.Direction(dst, Ensemble{Theta: theta, Scores: scores, Values: tc.values}); err != nil {
				t.Fatal(err)
			}
			for i := range dst {
				for d := range dst[i] {
					if math.Abs(dst[i][d]-tc.want[i][d]) > 1e-9 {
						t.Fatalf("particle %d: direction %v, want %v", i, dst[i], tc.want[i])
					}
				}
			}
		})
	}
	r := &ParetoMTL{Prefs: prefs}
	if err := r.Direction([][]float64{{0, 0}, {0, 0}}, Ensemble{Theta: theta, Scores: scores}); err == nil {
		t.Error("no values accepted")
	}
}
