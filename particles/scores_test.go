package particles

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// float32Ensemble is randomEnsemble with every score rounded to float32,
// and the same scores held in float32.
func float32Ensemble(rng *rand.Rand, m, k, d int) (e64, e32 Ensemble) {
	e64 = randomEnsemble(rng, m, k, d)
	e64.Values = make([][]float64, k)
	e32 = Ensemble{Theta: e64.Theta, Values: e64.Values, Scores32: make([][][]float32, k)}
	for t, s := range e64.Scores {
		e64.Values[t] = make([]float64, m)
		for a, v := range s {
			e64.Values[t][a] = 1 + rng.Float64()
			v32 := make([]float32, d)
			for x := range v {
				v32[x] = float32(v[x])
				v[x] = float64(v32[x])
			}
			e32.Scores32[t] = append(e32.Scores32[t], v32)
		}
	}
	return e64, e32
}

// scaled returns e64 with its scores multiplied by c in place of the
// Scales, and e32 with c as Scales.
func scaled(rng *rand.Rand, e64, e32 Ensemble) (Ensemble, Ensemble) {
	k, m, d := len(e64.Scores), len(e64.Theta), len(e64.Theta[0])
	c := randomVectors(rng, k, d, 3)
	pre := Ensemble{Theta: e64.Theta, Values: e64.Values, Scores: make([][][]float64, k)}
	for t := range k {
		for a := range m {
			v := make([]float64, d)
			for x := range d {
				v[x] = e64.Scores[t][a][x] * c[t][x]
			}
			pre.Scores[t] = append(pre.Scores[t], v)
		}
	}
	e32.Scales = c
	return pre, e32
}

// Every rule reads float32 scores as the float64 values they convert to
// exactly, and scales them (Scales) in float64 as a caller scaling float64
// scores in place would, so its direction must be the same to the last
// bit on both forms, on the toy-sized path (loops) and on long vectors
// (MT-SGD's matrix products).
func TestRulesSameOnFloat32Scores(t *testing.T) {
	rules := map[string]func(m int) Rule{
		"mtsgd":            func(int) Rule { return &MTSGD{Repulsion: 1} },
		"mtsgd first term": func(int) Rule { return &MTSGD{Repulsion: 1, FirstTermOnly: true} },
		"svgd":             func(int) Rule { return &SVGD{Repulsion: 1} },
		"moo-svgd":         func(int) Rule { return &MOOSVGD{Repulsion: 1} },
		"mgda":             func(int) Rule { return &MGDA{} },
		"linear":           func(int) Rule { return &Linear{} },
		"warmup":           func(int) Rule { return Warmup{} },
		"pareto-mtl": func(m int) Rule {
			prefs, _ := Preferences(m, 2)
			return &ParetoMTL{Prefs: prefs, InitSteps: 2}
		},
	}
	for _, tc := range []struct {
		d      int
		scales bool
	}{{7, false}, {7, true}, {3*blockSize + 5, false}, {3*blockSize + 5, true}} {
		const m, k = 3, 2
		d := tc.d
		rng := rand.New(rand.NewPCG(31, uint64(d)))
		e64, e32 := float32Ensemble(rng, m, k, d)
		if tc.scales {
			e64, e32 = scaled(rng, e64, e32)
		}
		for name, rule := range rules {
			if name == "mtsgd" && !useProducts(k, m, d) && d > blockSize {
				t.Fatalf("d = %d does not take the products path", d)
			}
			want, got := vectors(m, d), vectors(m, d)
			if err := rule(m).Direction(want, e64); err != nil {
				t.Fatalf("%s, d = %d, scales %v, float64 scores: %v", name, d, tc.scales, err)
			}
			if err := rule(m).Direction(got, e32); err != nil {
				t.Fatalf("%s, d = %d, scales %v, float32 scores: %v", name, d, tc.scales, err)
			}
			for a := range m {
				for x := range d {
					if got[a][x] != want[a][x] {
						t.Fatalf("%s, d = %d, scales %v: φ[%d][%d] = %v from float32 scores, %v from float64", name, d, tc.scales, a, x, got[a][x], want[a][x])
					}
				}
			}
		}
	}
}

func TestFloat32ScoresChecked(t *testing.T) {
	for _, d := range []int{7, 2*blockSize + 1} {
		_, e := float32Ensemble(rand.New(rand.NewPCG(32, 1)), 3, 2, d)
		e.Scores32[1][2][d-1] = float32(math.Inf(-1))
		err := (&MTSGD{Repulsion: 1}).Direction(vectors(3, d), e)
		if err == nil || !strings.Contains(err.Error(), "target 1 at particle 2 is not finite") {
			t.Errorf("d = %d, -Inf in a float32 score: error %v", d, err)
		}
	}
	e64, e32 := float32Ensemble(rand.New(rand.NewPCG(32, 2)), 2, 2, 3)
	e32.Scores = e64.Scores
	if err := (&Linear{}).Direction(vectors(2, 3), e32); err == nil {
		t.Error("scores in both float64 and float32: no error")
	}
	e32.Scores = nil
	for what, c := range map[string][][]float64{
		"scales for 1 targets, want 2":        {{1, 1, 1}},
		"scales of target 1 have dimension 2": {{1, 1, 1}, {1, 1}},
		"scales of target 0 are not finite":   {{1, math.NaN(), 1}, {1, 1, 1}},
	} {
		e32.Scales = c
		if err := (&Linear{}).Direction(vectors(2, 3), e32); err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("scales %v: error %v, want %q", c, err, what)
		}
	}
	e32 = Ensemble{Theta: e64.Theta, Scores32: [][][]float32{{{1, 2, 3}, {1, 2}}}}
	if err := (&Linear{}).Direction(vectors(2, 3), e32); err == nil || !strings.Contains(err.Error(), "dimension 2") {
		t.Errorf("ragged float32 score: error %v", err)
	}
}

func vectors(n, d int) [][]float64 { return grow(nil, n, d) }

// A rule of its own reads either form through Targets and CopyScore.
func TestCopyScore(t *testing.T) {
	e64, e32 := float32Ensemble(rand.New(rand.NewPCG(33, 1)), 3, 2, 5)
	for _, e := range []Ensemble{e64, e32} {
		if e.Targets() != 2 {
			t.Errorf("Targets() = %d, want 2", e.Targets())
		}
		for k := range 2 {
			for m := range 3 {
				got := make([]float64, 5)
				e.CopyScore(got, k, m)
				for x, want := range e64.Scores[k][m] {
					if got[x] != want {
						t.Errorf("score %d at %d [%d] = %v, want %v", k, m, x, got[x], want)
					}
				}
			}
		}
	}
}
