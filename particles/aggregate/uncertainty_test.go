package aggregate

import (
	"math"
	"testing"
)

func freshUncertainty() Stateful { return &UncertaintyWeighting{} }

// TestUncertaintyWeightingHandWorked checks two steps of the default
// method on 2 tasks with losses (1, 4). References, worked by hand in
// 40-digit decimal arithmetic: s starts at −0.5, so both weights are
// ½e^0.5 = 0.82436063535006407342; the update
// s ← s − 0.01·(½ − ½e^(−s)L) gives s = −0.49675639364649935927 for
// L = 1 and −0.47202557458599743706 for L = 4, whose weights ½e^(−s) are
// 0.82169106581256397075 and 0.80161919268011636323.
func TestUncertaintyWeightingHandWorked(t *testing.T) {
	var u UncertaintyWeighting
	g := identityGradients(2)
	d := make([]float64, 2)
	s := Step{Losses: []float64{1, 4}}
	const tol = 1e-15 // a few ulps of values near 1
	if err := u.Aggregate(d, g, s); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "w₁ at step 0", d[0], 0.82436063535006407342, tol)
	assertClose(t, "w₂ at step 0", d[1], 0.82436063535006407342, tol)
	state := u.State()
	assertClose(t, "K", state[0], 2, 0)
	assertClose(t, "s₁ after step 0", state[1], -0.49675639364649935927, tol)
	assertClose(t, "s₂ after step 0", state[2], -0.47202557458599743706, tol)
	s.Index = 1
	if err := u.Aggregate(d, g, s); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "w₁ at step 1", d[0], 0.82169106581256397075, tol)
	assertClose(t, "w₂ at step 1", d[1], 0.80161919268011636323, tol)
}

// TestUncertaintyWeightingFixedPoint checks that s = log L is a fixed
// point of the update (its gradient ½ − ½e^(−s)L vanishes there), where
// the weights are 1/(2L), and that from the default start s converges to
// log L: near the fixed point the error shrinks by (1 − lr/2) a step, so
// after 5000 steps at lr 0.01 it is below 0.1·e^(−25).
func TestUncertaintyWeightingFixedPoint(t *testing.T) {
	losses := []float64{0.25, 3}
	var u UncertaintyWeighting
	if err := u.SetState([]float64{2, math.Log(0.25), math.Log(3)}); err != nil {
		t.Fatal(err)
	}
	d := make([]float64, 2)
	if err := u.Aggregate(d, identityGradients(2), Step{Losses: losses}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "w₁ at s = log L", d[0], 1/(2*0.25), 1e-15)
	assertClose(t, "w₂ at s = log L", d[1], 1/(2*3.0), 1e-15)
	st := u.State()
	assertClose(t, "s₁ after a step at the fixed point", st[1], math.Log(0.25), 1e-16)
	assertClose(t, "s₂ after a step at the fixed point", st[2], math.Log(3), 1e-15)

	var v UncertaintyWeighting
	for i := range 5000 {
		if err := v.Aggregate(d, identityGradients(2), Step{Losses: losses, Index: i}); err != nil {
			t.Fatal(err)
		}
	}
	st = v.State()
	assertClose(t, "s₁ after 5000 steps", st[1], math.Log(0.25), 1e-9)
	assertClose(t, "s₂ after 5000 steps", st[2], math.Log(3), 1e-9)
}

// TestUncertaintyLossGradient checks the gradient that updates s against
// central differences of the loss ½e^(−s)L + ½s, step 1e-5: the
// truncation error is h²/6·|∂³f| ≤ 1e-10·e^(−s)L and rounding adds
// about 1e-16·f/h, so 1e-8 relative covers both.
func TestUncertaintyLossGradient(t *testing.T) {
	for _, c := range []struct{ s, loss float64 }{
		{-0.5, 1}, {0, 0}, {0.3, 2.5}, {-2, 0.01}, {3, 40}, {math.Log(7), 7},
	} {
		f := func(s float64) float64 { return uncertaintyLoss(s, c.loss) }
		fd := centralDifference(f, c.s, 1e-5)
		got := uncertaintyLossGradient(c.s, c.loss)
		assertClose(t, "∂/∂s at s="+formatFloat(c.s)+", L="+formatFloat(c.loss), got, fd, 1e-8*max(1, math.Abs(fd), 0.5*math.Exp(-c.s)*c.loss))
	}
}

func TestUncertaintyWeightingLearningRate(t *testing.T) {
	// With LearningRate 0.5 the first update of s₁ for L = 1 is
	// −0.5 − 0.5·(½ − ½e^0.5) = −0.5 + 0.5·0.32436063535006407342.
	u := UncertaintyWeighting{LearningRate: 0.5}
	if err := u.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{1, 1}}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "s₁", u.State()[1], -0.5+0.5*0.32436063535006407342, 1e-15)
}

func TestUncertaintyWeightingState(t *testing.T) {
	checkStateRoundTrip(t, freshUncertainty)
	checkSetStateRejects(t, freshUncertainty)
}

func TestUncertaintyWeightingErrors(t *testing.T) {
	checkInputErrors(t, asAggregator(freshUncertainty), true)
}
func TestUncertaintyWeightingNoNaN(t *testing.T) { checkNoNaN(t, asAggregator(freshUncertainty)) }
func TestUncertaintyWeightingOdd(t *testing.T)   { checkOdd(t, asAggregator(freshUncertainty)) }
