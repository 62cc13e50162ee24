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

// scaledInPlace returns e with its scores scaled as a caller scaling
// float64 scores in place would: times factor, or, with normalize,
// divided per target and coordinate by their norm over the particles
// (one over the norm, floored, then a product, as the engine did).
func scaledInPlace(e Ensemble, factor float64, normalize bool) Ensemble {
	k, m, d := len(e.Scores), len(e.Theta), len(e.Theta[0])
	out := Ensemble{Theta: e.Theta, Values: e.Values, Scores: make([][][]float64, k)}
	for t := range k {
		for range m {
			out.Scores[t] = append(out.Scores[t], make([]float64, d))
		}
		for x := range d {
			c := factor
			if normalize {
				sq := 0.0
				for a := range m {
					sq += e.Scores[t][a][x] * e.Scores[t][a][x]
				}
				c = 1 / math.Max(math.Sqrt(sq), 1e-12)
			}
			for a := range m {
				out.Scores[t][a][x] = e.Scores[t][a][x] * c
			}
		}
	}
	return out
}

// Every rule reads float32 scores as the float64 values they convert to
// exactly, and scales them (Factor, Normalize) in float64 as they are
// read, so its direction must be the same to the last bit as from float64
// scores scaled in place, for either storage, on the toy-sized path
// (loops) and on long vectors (MT-SGD's matrix products, a block at a
// time).
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
		d         int
		factor    float64
		normalize bool
	}{
		{7, 0, false}, {7, 250, false}, {7, 0, true},
		{3*blockSize + 5, 0, false}, {3*blockSize + 5, 250, false}, {3*blockSize + 5, 0, true},
	} {
		const m, k = 3, 2
		d := tc.d
		e64, e32 := float32Ensemble(rand.New(rand.NewPCG(31, uint64(d))), m, k, d)
		ref := e64
		if tc.factor != 0 || tc.normalize {
			ref = scaledInPlace(e64, tc.factor, tc.normalize)
		}
		e64.Factor, e64.Normalize = tc.factor, tc.normalize
		e32.Factor, e32.Normalize = tc.factor, tc.normalize
		for name, rule := range rules {
			if name == "mtsgd" && !useProducts(k, m, d) && d > blockSize {
				t.Fatalf("d = %d does not take the products path", d)
			}
			want := vectors(m, d)
			if err := rule(m).Direction(want, ref); err != nil {
				t.Fatalf("%s, %+v, scaled in place: %v", name, tc, err)
			}
			for form, e := range map[string]Ensemble{"float64": e64, "float32": e32} {
				got := vectors(m, d)
				if err := rule(m).Direction(got, e); err != nil {
					t.Fatalf("%s, %+v, %s scores: %v", name, tc, form, err)
				}
				for a := range m {
					for x := range d {
						if got[a][x] != want[a][x] {
							t.Fatalf("%s, %+v: φ[%d][%d] = %v from %s scores, %v from scores scaled in place", name, tc, a, x, got[a][x], form, want[a][x])
						}
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
	// Finite scores that overflow once scaled stop MT-SGD's products too.
	d := 2*blockSize + 1
	big, _ := float32Ensemble(rand.New(rand.NewPCG(32, 3)), 3, 2, d)
	big.Scores[0][1][d/2], big.Factor = 1e300, 1e10
	if err := (&MTSGD{Repulsion: 1}).Direction(vectors(3, d), big); err == nil || !strings.Contains(err.Error(), "once scaled") {
		t.Errorf("a score overflowing once scaled: error %v", err)
	}
	e32.Scores = nil
	for _, bad := range []Ensemble{
		{Theta: e32.Theta, Scores32: e32.Scores32, Factor: math.NaN()},
		{Theta: e32.Theta, Scores32: e32.Scores32, Factor: math.Inf(1)},
		{Theta: e32.Theta, Scores32: e32.Scores32, Factor: 2, Normalize: true},
	} {
		if err := (&Linear{}).Direction(vectors(2, 3), bad); err == nil || !strings.Contains(err.Error(), "score factor") {
			t.Errorf("factor %v, normalize %v: error %v", bad.Factor, bad.Normalize, err)
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
