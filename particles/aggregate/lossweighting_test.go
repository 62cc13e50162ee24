package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Checks shared by the loss weightings' tests.

// identityGradients returns the K×K identity as task gradients, so that
// the direction Σₖ wₖ gₖ is the weight vector itself.
func identityGradients(k int) [][]float64 {
	g := make([][]float64, k)
	for i := range g {
		g[i] = make([]float64, k)
		g[i][i] = 1
	}
	return g
}

// centralDifference is (f(x+h) − f(x−h))/2h, whose error is O(h²·f‴).
func centralDifference(f func(float64) float64, x, h float64) float64 {
	return (f(x+h) - f(x-h)) / (2 * h)
}

// weightingSequence is a fixed sequence of steps: 3 tasks, 4 shared
// parameters, positive losses that drift down with noise, 5 steps an
// epoch, drawn from a seeded generator.
func weightingSequence(n int) ([][][]float64, []Step) {
	rng := rand.New(rand.NewPCG(7, 11))
	const k, d = 3, 4
	gs := make([][][]float64, n)
	steps := make([]Step, n)
	for t := range n {
		g := make([][]float64, k)
		losses := make([]float64, k)
		for i := range g {
			g[i] = make([]float64, d)
			for j := range g[i] {
				g[i][j] = rng.NormFloat64()
			}
			losses[i] = (1 + float64(i)) * math.Exp(-0.02*float64(t)) * (1 + 0.3*rng.Float64())
		}
		gs[t] = g
		steps[t] = Step{Losses: losses, Index: t, StepsPerEpoch: 5, Seed: 99, Particle: 2}
	}
	return gs, steps
}

// checkStateRoundTrip runs a sequence of steps on one value, and the
// same sequence on a second value that is stopped after `cut` steps, its
// State set on a fresh third value which runs the rest; the directions
// must agree bit for bit.
func checkStateRoundTrip(t *testing.T, fresh func() Stateful) {
	t.Helper()
	const n = 23
	gs, steps := weightingSequence(n)
	for _, cut := range []int{0, 1, 2, 6, 11, 17} {
		whole, first := fresh(), fresh()
		want := make([]float64, len(gs[0][0]))
		got := make([]float64, len(gs[0][0]))
		for i := range cut {
			if err := whole.Aggregate(want, gs[i], steps[i]); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if err := first.Aggregate(got, gs[i], steps[i]); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		resumed := fresh()
		if err := resumed.SetState(first.State()); err != nil {
			t.Fatalf("cut %d: SetState: %v", cut, err)
		}
		for i := cut; i < n; i++ {
			if err := whole.Aggregate(want, gs[i], steps[i]); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if err := resumed.Aggregate(got, gs[i], steps[i]); err != nil {
				t.Fatalf("cut %d, step %d: %v", cut, i, err)
			}
			for j := range want {
				if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
					t.Fatalf("cut %d, step %d: resumed d[%d] = %v, uninterrupted %v", cut, i, j, got[j], want[j])
				}
			}
		}
	}
}

// checkSetStateRejects runs a few steps to get a valid state, then
// checks that SetState rejects it cut short, lengthened, with a NaN in
// each position and with a task count that is not a positive integer,
// and that a rejected SetState leaves the value's state as it was.
func checkSetStateRejects(t *testing.T, fresh func() Stateful) {
	t.Helper()
	gs, steps := weightingSequence(4)
	a := fresh()
	dst := make([]float64, len(gs[0][0]))
	for i := range gs {
		if err := a.Aggregate(dst, gs[i], steps[i]); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	good := a.State()
	if len(good) == 0 {
		t.Fatal("empty state after four steps")
	}
	bad := map[string][]float64{
		"short": good[:len(good)-1],
		"long":  append(append([]float64(nil), good...), 0),
		"K=0":   append([]float64{0}, good[1:]...),
		"K=1.5": append([]float64{1.5}, good[1:]...),
		"K<0":   append([]float64{-3}, good[1:]...),
	}
	for i := range good {
		s := append([]float64(nil), good...)
		s[i] = math.NaN()
		bad[fmt.Sprintf("NaN at %d", i)] = s
	}
	for name, s := range bad {
		b := fresh()
		if err := b.SetState(good); err != nil {
			t.Fatalf("SetState(good): %v", err)
		}
		if err := b.SetState(s); err == nil {
			t.Errorf("%s: SetState accepted %v", name, s)
		}
		after := b.State()
		for i := range good {
			if math.Float64bits(after[i]) != math.Float64bits(good[i]) {
				t.Errorf("%s: rejected SetState changed the state to %v", name, after)
				break
			}
		}
	}
	// A value restored from an empty state is a fresh one.
	b := fresh()
	if err := b.SetState(nil); err != nil {
		t.Errorf("SetState(nil): %v", err)
	}
	if s := b.State(); len(s) != 0 {
		t.Errorf("State after SetState(nil) = %v, want empty", s)
	}
}

// checkInputErrors checks that a loss weighting returns an error, not a
// panic, for malformed steps, and that a rejected step leaves its state
// alone. needLosses says whether the method reads Losses at all.
func checkInputErrors(t *testing.T, fresh func() Aggregator, needLosses bool) {
	t.Helper()
	ok := [][]float64{{1, 2}, {3, 4}}
	losses := []float64{0.5, 0.7}
	cases := []struct {
		name string
		dst  []float64
		g    [][]float64
		s    Step
		loss bool // the case is malformed only for a method that reads losses
	}{
		{"K=0", make([]float64, 2), nil, Step{StepsPerEpoch: 1}, false},
		{"short dst", make([]float64, 1), ok, Step{Losses: losses, StepsPerEpoch: 1}, false},
		{"ragged rows", make([]float64, 2), [][]float64{{1, 2}, {3}}, Step{Losses: losses, StepsPerEpoch: 1}, false},
		{"NaN gradient", make([]float64, 2), [][]float64{{1, math.NaN()}, {3, 4}}, Step{Losses: losses, StepsPerEpoch: 1}, false},
		{"Inf gradient", make([]float64, 2), [][]float64{{1, 2}, {math.Inf(-1), 4}}, Step{Losses: losses, StepsPerEpoch: 1}, false},
		{"missing losses", make([]float64, 2), ok, Step{StepsPerEpoch: 1}, true},
		{"three losses", make([]float64, 2), ok, Step{Losses: []float64{1, 2, 3}, StepsPerEpoch: 1}, true},
		{"NaN loss", make([]float64, 2), ok, Step{Losses: []float64{math.NaN(), 1}, StepsPerEpoch: 1}, true},
		{"Inf loss", make([]float64, 2), ok, Step{Losses: []float64{1, math.Inf(1)}, StepsPerEpoch: 1}, true},
		{"negative loss", make([]float64, 2), ok, Step{Losses: []float64{1, -0.25}, StepsPerEpoch: 1}, true},
	}
	for _, c := range cases {
		if c.loss && !needLosses {
			continue
		}
		a := fresh()
		if err := a.Aggregate(make([]float64, 2), ok, Step{Losses: losses, StepsPerEpoch: 1}); err != nil {
			t.Fatalf("%s: a valid first step failed: %v", c.name, err)
		}
		before := stateOf(a)
		if err := a.Aggregate(c.dst, c.g, c.s); err == nil {
			t.Errorf("%s: no error", c.name)
		}
		after := stateOf(a)
		if len(after) != len(before) {
			t.Errorf("%s: rejected step changed the state from %v to %v", c.name, before, after)
			continue
		}
		for i := range before {
			if math.Float64bits(after[i]) != math.Float64bits(before[i]) {
				t.Errorf("%s: rejected step changed the state from %v to %v", c.name, before, after)
				break
			}
		}
	}
	// A value whose state was built for K tasks rejects a step with
	// another K.
	a := fresh()
	if _, ok := a.(Stateful); !ok {
		return
	}
	if err := a.Aggregate(make([]float64, 2), ok, Step{Losses: losses, StepsPerEpoch: 1}); err != nil {
		t.Fatal(err)
	}
	three := [][]float64{{1, 2}, {3, 4}, {5, 6}}
	if err := a.Aggregate(make([]float64, 2), three, Step{Losses: []float64{1, 1, 1}, Index: 1, StepsPerEpoch: 1}); err == nil {
		t.Error("a value that saw 2 tasks accepted 3")
	}
}

// hardGradientSets are gradient sets on which a careless method divides
// by zero or overflows.
func hardGradientSets() map[string][][]float64 {
	return map[string][][]float64{
		"identical":        {{1, -2, 3}, {1, -2, 3}, {1, -2, 3}},
		"opposite":         {{1, -2, 3}, {-1, 2, -3}, {0.5, 0.5, 0}},
		"zero":             {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
		"one zero":         {{0, 0, 0}, {1, 2, 3}, {-3, 2, 1}},
		"nearly collinear": {{1, 1, 1}, {1, 1, 1 + 1e-12}, {1 + 1e-12, 1, 1}},
		"1e4 times larger": {{1e4, -2e4, 3e4}, {1, 2, -1}, {0.5, -0.25, 1}},
	}
}

// checkNoNaN runs a weighting for a few steps on each hard gradient set,
// with equal, very unequal and shrinking losses, and checks every
// direction and the state are finite.
func checkNoNaN(t *testing.T, fresh func() Aggregator) {
	t.Helper()
	lossSets := map[string]func(step int) []float64{
		"equal":   func(int) []float64 { return []float64{1, 1, 1} },
		"unequal": func(int) []float64 { return []float64{1e-6, 1, 1e6} },
		"shrinking": func(step int) []float64 {
			return []float64{math.Pow(0.5, float64(step)), 1, 2 * math.Pow(0.9, float64(step))}
		},
	}
	for gname, g := range hardGradientSets() {
		for lname, losses := range lossSets {
			a := fresh()
			dst := make([]float64, len(g[0]))
			for step := range 12 {
				s := Step{Losses: losses(step), Index: step, StepsPerEpoch: 2, Seed: 5}
				if err := a.Aggregate(dst, g, s); err != nil {
					t.Fatalf("%s, %s losses, step %d: %v", gname, lname, step, err)
				}
				for j, v := range dst {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s, %s losses, step %d: d[%d] = %v", gname, lname, step, j, v)
					}
				}
				for j, v := range stateOf(a) {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s, %s losses, step %d: state[%d] = %v", gname, lname, step, j, v)
					}
				}
			}
		}
	}
}

// checkOdd checks that negating every gradient negates the direction,
// the package's convention, on the same state.
func checkOdd(t *testing.T, fresh func() Aggregator) {
	t.Helper()
	gs, steps := weightingSequence(8)
	a, b := fresh(), fresh()
	d1 := make([]float64, len(gs[0][0]))
	d2 := make([]float64, len(gs[0][0]))
	for i := range gs {
		neg := make([][]float64, len(gs[i]))
		for k, row := range gs[i] {
			neg[k] = make([]float64, len(row))
			for j, v := range row {
				neg[k][j] = -v
			}
		}
		if err := a.Aggregate(d1, gs[i], steps[i]); err != nil {
			t.Fatal(err)
		}
		if err := b.Aggregate(d2, neg, steps[i]); err != nil {
			t.Fatal(err)
		}
		for j := range d1 {
			if d2[j] != -d1[j] {
				t.Fatalf("step %d: d(−g)[%d] = %v, want −d(g) = %v", i, j, d2[j], -d1[j])
			}
		}
	}
}

func assertClose(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.17g, want %.17g (tolerance %g)", what, got, want, tol)
	}
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// stateOf is a's State, or nil for a method without state.
func stateOf(a Aggregator) []float64 {
	if st, ok := a.(Stateful); ok {
		return st.State()
	}
	return nil
}

// asAggregator turns a constructor of Stateful values into one of
// Aggregators, for the checks that do not need the state.
func asAggregator(fresh func() Stateful) func() Aggregator {
	return func() Aggregator { return fresh() }
}
