package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// aggregators returns a fresh value of every gradient aggregator, the
// non-default parameters included, keyed by name.
func aggregators() map[string]Aggregator {
	return map[string]Aggregator{
		"pcgrad":       &PCGrad{},
		"cagrad":       &CAGrad{},
		"cagrad c=2":   &CAGrad{C: 2},
		"nash-mtl":     &NashMTL{},
		"imtl-g":       &IMTLG{},
		"aligned-mtl":  &AlignedMTL{},
		"upgrad":       &UPGrad{},
		"dualproj":     &DualProj{},
		"config":       &ConFIG{},
		"fairgrad":     &FairGrad{},
		"fairgrad α=2": &FairGrad{Alpha: 2},
	}
}

// aggregateOrFail runs a on g and returns the direction.
func aggregateOrFail(t *testing.T, a Aggregator, g [][]float64, s Step) []float64 {
	t.Helper()
	dst := make([]float64, len(g[0]))
	if err := a.Aggregate(dst, g, s); err != nil {
		t.Fatalf("%v", err)
	}
	return dst
}

// aggregateOrErr runs a on g at the zero Step.
func aggregateOrErr(a Aggregator, g [][]float64) ([]float64, error) {
	dst := make([]float64, len(g[0]))
	return dst, a.Aggregate(dst, g, Step{})
}

// maxAbs returns the largest |v_i|, 0 for an empty slice.
func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// gradientScale returns the largest |g_kx|, the scale the tolerances of
// the directions are stated at.
func gradientScale(g [][]float64) float64 {
	m := 0.0
	for _, row := range g {
		m = math.Max(m, maxAbs(row))
	}
	return m
}

// closeTo reports whether every |got_i − want_i| ≤ tol.
func closeTo(got, want []float64, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol) {
			return false
		}
	}
	return true
}

// negated returns −G.
func negated(g [][]float64) [][]float64 {
	n := make([][]float64, len(g))
	for i, row := range g {
		n[i] = make([]float64, len(row))
		for x, v := range row {
			n[i][x] = -v
		}
	}
	return n
}

// spreadNorms multiplies each row of g by 10^u, u uniform on [lo, hi),
// so that the gradients' norms differ by up to 10^(hi−lo), and returns
// the largest norm after.
func spreadNorms(rng *rand.Rand, g [][]float64, lo, hi float64) float64 {
	largest := 0.0
	for i := range g {
		f := math.Pow(10, lo+(hi-lo)*rng.Float64())
		for x := range g[i] {
			g[i][x] *= f
		}
		largest = math.Max(largest, math.Sqrt(dotProduct(g[i], g[i])))
	}
	return largest
}

// randomGradients returns K rows of length d with standard normal entries.
func randomGradients(rng *rand.Rand, k, d int) [][]float64 {
	g := make([][]float64, k)
	for i := range g {
		g[i] = make([]float64, d)
		for x := range g[i] {
			g[i][x] = rng.NormFloat64()
		}
	}
	return g
}

// oddnessCases are the gradient sets every method must be odd on:
// negating G must negate d. A method may reject a set (Nash-MTL and
// IMTL-G reject some degenerate ones); it must then reject −G too.
var oddnessCases = map[string][][]float64{
	"orthogonal":       {{1, 0}, {0, 2}},
	"conflicting":      {{1, 0}, {-1, 1}},
	"nearly collinear": {{1, 0}, {1, 1e-3}},
	"1e4 larger":       {{1, 0}, {-1e4, 2e4}},
	"three in 3-D":     {{1, 2, 0}, {-1, 0.5, 1}, {0.3, -2, 1}},
	"three in 2-D":     {{1, 0}, {-1, 0.2}, {0.3, 1}},
}

// TestOddness checks d(−G) = −d(G) for every method, exactly up to
// rounding: 1e-12 relative to the direction's largest entry.
func TestOddness(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string][][]float64{"random K=4 d=7": randomGradients(rng, 4, 7)}
	for name, g := range oddnessCases {
		cases[name] = g
	}
	s := Step{Seed: 3, Particle: 1, Index: 7}
	for method, a := range aggregators() {
		for name, g := range cases {
			d := make([]float64, len(g[0]))
			errPlus := a.Aggregate(d, g, s)
			neg := make([]float64, len(g[0]))
			errMinus := a.Aggregate(neg, negated(g), s)
			if (errPlus == nil) != (errMinus == nil) {
				t.Errorf("%s, %s: error %v on G but %v on −G", method, name, errPlus, errMinus)
				continue
			}
			if errPlus != nil {
				continue
			}
			for x := range d {
				if math.Abs(d[x]+neg[x]) > 1e-12*math.Max(maxAbs(d), 1e-300) {
					t.Errorf("%s, %s: d(G) = %v, d(−G) = %v", method, name, d, neg)
					break
				}
			}
		}
	}
}

// TestBadInputIsAnError checks that every method returns an error, and
// does not panic, on shapes it cannot work with and on non-finite input.
func TestBadInputIsAnError(t *testing.T) {
	good := [][]float64{{1, 0}, {0, 1}}
	bad := map[string]struct {
		dst []float64
		g   [][]float64
	}{
		"no tasks":            {make([]float64, 2), nil},
		"ragged rows":         {make([]float64, 2), [][]float64{{1, 0}, {1}}},
		"short destination":   {make([]float64, 1), good},
		"long destination":    {make([]float64, 3), good},
		"empty destination":   {nil, [][]float64{{}, {}}},
		"NaN":                 {make([]float64, 2), [][]float64{{1, math.NaN()}, {0, 1}}},
		"+Inf":                {make([]float64, 2), [][]float64{{1, 0}, {math.Inf(1), 1}}},
		"-Inf in a large set": {make([]float64, 2), [][]float64{{1, 0}, {0, 1}, {2, 1}, {math.Inf(-1), 0}}},
	}
	for method, a := range aggregators() {
		if err := a.Aggregate(make([]float64, 2), good, Step{}); err != nil {
			t.Errorf("%s on orthogonal gradients: %v", method, err)
		}
		for what, b := range bad {
			if err := a.Aggregate(b.dst, b.g, Step{}); err == nil {
				t.Errorf("%s: %s: no error", method, what)
			}
		}
	}
}

// TestSingleTask checks that with K = 1 every method's direction is
// parallel to the task's gradient, with the factor its scale gives:
// the gradient itself for all but Nash-MTL, whose direction has norm
// √K = 1 (α = 1/‖g‖ solves α²‖g‖² = 1), and CAGrad, whose direction is
// g₀ + c‖g₀‖·g/‖g‖ = (1 + c)g.
func TestSingleTask(t *testing.T) {
	g := [][]float64{{3, -4}}
	want := map[string][]float64{
		"pcgrad":     {3, -4},
		"cagrad":     {3 * 1.4, -4 * 1.4},
		"cagrad c=2": {3 * 3, -4 * 3},
		"nash-mtl":   {3.0 / 5, -4.0 / 5},
		"imtl-g":     {3, -4},
		// GGᵀ = (25): B = √25·25^(−1/2) = 1, d = g.
		"aligned-mtl": {3, -4},
		"upgrad":      {3, -4},
		"dualproj":    {3, -4},
		// û = g/‖g‖, projection ‖g‖: d = g.
		"config": {3, -4},
		// ‖g‖²w = w^(−1/α): w = ‖g‖^(−2α/(α+1)), d = g·5^(−2α/(α+1)).
		"fairgrad":     {3.0 / 5, -4.0 / 5},
		"fairgrad α=2": {3 * math.Pow(5, -4.0/3), -4 * math.Pow(5, -4.0/3)},
	}
	for method, a := range aggregators() {
		w, ok := want[method]
		if !ok {
			t.Errorf("%s: no expected single-task direction", method)
			continue
		}
		if got := aggregateOrFail(t, a, g, Step{}); !closeTo(got, w, 1e-14*5) {
			t.Errorf("%s: %v, want %v", method, got, w)
		}
	}
}

// TestFortyTasks runs every method on CelebA's task count, 40 random
// gradients of 2,000 entries with norms spread over 10², and positive
// losses, for three steps (an epoch each): each must return a finite
// direction that improves at least one task (d·gₖ > 0 for some k).
func TestFortyTasks(t *testing.T) {
	rng := rand.New(rand.NewPCG(131, 132))
	const k, d = 40, 2000
	g := randomGradients(rng, k, d)
	spreadNorms(rng, g, -1, 1)
	losses := make([]float64, k)
	for i := range losses {
		losses[i] = 0.1 + rng.Float64()
	}
	methods := aggregators()
	for name, a := range map[string]Aggregator{
		"uw": &UncertaintyWeighting{}, "gradnorm": &GradNorm{}, "dwa": &DWA{}, "rlw": RLW{},
		"famo": &FAMO{}, "gls": &GLS{}, "stch": &STCH{Warmup: -1}, "gradvac": &GradVac{},
		"imtl": &IMTL{},
	} {
		methods[name] = a
	}
	for name, a := range methods {
		dst := make([]float64, d)
		for step := range 3 {
			if err := a.Aggregate(dst, g, Step{Losses: losses, Index: step, StepsPerEpoch: 1, Seed: 1}); err != nil {
				t.Fatalf("%s, step %d: %v", name, step, err)
			}
		}
		improves := false
		for x, v := range dst {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: d[%d] = %v", name, x, v)
			}
		}
		for _, r := range g {
			improves = improves || dotProduct(dst, r) > 0
		}
		if !improves {
			t.Errorf("%s: the direction improves no task", name)
		}
	}
}
