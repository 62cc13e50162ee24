package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func freshIMTL() Stateful { return &IMTL{} }

// TestIMTLScalesThenBalances checks two steps against IMTL-G (IMTLG,
// tested against its closed form) on gradients scaled by hand: the first
// step, s = 0, is IMTL-G's on the raw gradients, bit for bit; losses
// (1, 4) move s by −0.01·(e⁰L − 1) to (0, −0.03), and the second step is
// IMTL-G's on (g₁, e^(−0.03)g₂), within 1e-15 relative.
func TestIMTLScalesThenBalances(t *testing.T) {
	rng := rand.New(rand.NewPCG(141, 142))
	g := randomGradients(rng, 2, 5)
	s := Step{Losses: []float64{1, 4}}
	a := &IMTL{}
	got := aggregateOrFail(t, a, g, s)
	want := aggregateOrFail(t, &IMTLG{}, g, s)
	for x := range got {
		if got[x] != want[x] {
			t.Fatalf("first step: %v, IMTL-G %v", got, want)
		}
	}
	st := a.State()
	assertClose(t, "s₁", st[1], 0, 0)
	assertClose(t, "s₂", st[2], -0.03, 1e-17)
	got = aggregateOrFail(t, a, g, s)
	scaled := [][]float64{g[0], make([]float64, 5)}
	for x, v := range g[1] {
		scaled[1][x] = math.Exp(-0.03) * v
	}
	want = aggregateOrFail(t, &IMTLG{}, scaled, s)
	if !closeTo(got, want, 1e-15*maxAbs(want)) {
		t.Errorf("second step: %v, IMTL-G on the scaled gradients %v", got, want)
	}
}

// TestIMTLLossBalance checks the fixed point s = −log L, where every
// scaled loss e^s·L is 1 and s does not move, and that from s = 0 the
// scales converge to it: near it the error shrinks by (1 − lr) a step,
// so after 3000 steps at lr 0.01 it is below e^(−30) of the start.
func TestIMTLLossBalance(t *testing.T) {
	losses := []float64{0.25, 3}
	g := [][]float64{{1, 0}, {0, 1}}
	a := &IMTL{}
	if err := a.SetState([]float64{2, -math.Log(0.25), -math.Log(3)}); err != nil {
		t.Fatal(err)
	}
	aggregateOrFail(t, a, g, Step{Losses: losses})
	st := a.State()
	assertClose(t, "s₁ at the fixed point", st[1], -math.Log(0.25), 1e-15)
	assertClose(t, "s₂ at the fixed point", st[2], -math.Log(3), 1e-15)
	b := &IMTL{}
	for step := range 3000 {
		aggregateOrFail(t, b, g, Step{Losses: losses, Index: step})
	}
	st = b.State()
	assertClose(t, "s₁ after 3000 steps", st[1], -math.Log(0.25), 1e-11)
	assertClose(t, "s₂ after 3000 steps", st[2], -math.Log(3), 1e-11)
}

// TestIMTLUndefined checks that where IMTL-G's direction is undefined
// (identical gradients) the error wraps ErrUndefined and s stays.
func TestIMTLUndefined(t *testing.T) {
	a := &IMTL{}
	if err := a.SetState([]float64{2, 0.5, -0.5}); err != nil {
		t.Fatal(err)
	}
	err := a.Aggregate(make([]float64, 2), [][]float64{{1, 2}, {1, 2}}, Step{Losses: []float64{1, 1}})
	if !errors.Is(err, ErrUndefined) {
		t.Errorf("identical gradients: %v, want ErrUndefined", err)
	}
	if st := a.State(); st[1] != 0.5 || st[2] != -0.5 {
		t.Errorf("s moved to %v on a failed step", st[1:])
	}
}

func TestIMTLState(t *testing.T) {
	checkStateRoundTrip(t, freshIMTL)
	checkSetStateRejects(t, freshIMTL)
}

func TestIMTLErrors(t *testing.T) { checkInputErrors(t, asAggregator(freshIMTL), true) }
func TestIMTLOdd(t *testing.T)    { checkOdd(t, asAggregator(freshIMTL)) }
