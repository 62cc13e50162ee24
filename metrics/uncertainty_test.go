package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Two agreeing particles disagree by nothing; two certain, opposite ones
// by log 2.
func TestDisagree(t *testing.T) {
	h3 := -2*0.3*math.Log(0.3) - 0.4*math.Log(0.4)
	e3 := (math.Log(2) + (-2*0.1*math.Log(0.1) - 0.8*math.Log(0.8))) / 2
	for _, tc := range []struct {
		ps                 [][]float64
		label              int
		predictive, mutual float64
	}{
		{[][]float64{{0.2, 0.8}, {0.2, 0.8}}, 1, -0.2*math.Log(0.2) - 0.8*math.Log(0.8), 0},
		{[][]float64{{1, 0}, {0, 1}}, 0, math.Log(2), math.Log(2)},
		{[][]float64{{0.5, 0.5, 0}, {0.1, 0.1, 0.8}}, 2, h3, h3 - e3},
	} {
		d := Disagree(make([]float64, len(tc.ps[0])), tc.ps)
		if d.Label != tc.label || math.Abs(d.Predictive-tc.predictive) > 1e-15 || math.Abs(d.MutualInformation-tc.mutual) > 1e-15 {
			t.Errorf("%v: %+v, want label %d, predictive %v, mutual %v", tc.ps, d, tc.label, tc.predictive, tc.mutual)
		}
	}
}

// bruteAUROC counts every (negative, positive) pair: 1 where the positive
// scores higher, 1/2 on a tie. The definition AUROC's sort must match.
func bruteAUROC(neg, pos []float64) float64 {
	var wins float64
	for _, p := range pos {
		for _, n := range neg {
			switch {
			case p > n:
				wins++
			case p == n:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(neg)*len(pos))
}

func TestAUROC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name     string
		neg, pos []float64
		want     float64 // NaN: the brute-force count
	}{
		{"identical sets", []float64{0.1, 0.5, 0.9}, []float64{0.1, 0.5, 0.9}, 0.5},
		{"all tied", []float64{2, 2}, []float64{2, 2, 2}, 0.5},
		{"separated", []float64{0, 0.1, 0.2}, []float64{0.3, 5}, 1},
		{"reversed", []float64{3, 4}, []float64{1, 2}, 0},
		// By hand: pairs (p,n): 1>0 1, 1=1 ½, 1<2 0; 2>0 1, 2>1 1, 2=2 ½: 4/6.
		{"hand", []float64{0, 1, 2}, []float64{1, 2}, 4.0 / 6},
		{"one each", []float64{1}, []float64{1}, 0.5},
	} {
		got, err := AUROC(tc.neg, tc.pos)
		if err != nil || math.Abs(got-tc.want) > 1e-15 || math.Abs(got-bruteAUROC(tc.neg, tc.pos)) > 1e-15 {
			t.Errorf("%s: %v (err %v), want %v", tc.name, got, err, tc.want)
		}
	}
	// Random small cases with many ties (scores on a grid of 5 values),
	// against the pairwise count.
	for trial := range 200 {
		neg := make([]float64, 1+rng.IntN(12))
		pos := make([]float64, 1+rng.IntN(12))
		for i := range neg {
			neg[i] = float64(rng.IntN(5))
		}
		for i := range pos {
			pos[i] = float64(rng.IntN(5)) + 0.5*float64(rng.IntN(2))
		}
		got, err := AUROC(neg, pos)
		if want := bruteAUROC(neg, pos); err != nil || math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: %v, brute force %v (err %v)", trial, got, want, err)
		}
	}
	for _, bad := range [][2][]float64{{nil, {1}}, {{1}, nil}, {{math.NaN()}, {1}}} {
		if _, err := AUROC(bad[0], bad[1]); err == nil {
			t.Errorf("AUROC(%v, %v): no error", bad[0], bad[1])
		}
	}
}
