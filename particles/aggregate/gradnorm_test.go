package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func freshGradNorm() Stateful { return &GradNorm{} }

// TestGradNormHandWorked checks two steps of the default method (α 1.5,
// rate 1e-3) on g₁ = (3, 4), g₂ = (0, 1), so ‖g₁‖ = 5 and ‖g₂‖ = 1.
// References, worked by hand in 40-digit decimal arithmetic:
//
// Step 0, L = (2, 1) = L(0): r = (1, 1), G = (5, 1), Ḡ = 3, targets
// (3, 3), so ∂L_grad/∂w = (+5, −1), w becomes (0.995, 1.001), and after
// renormalising to sum 2, (0.99699398797595190381, 1.0030060120240480962).
// d uses w = (1, 1): d = g₁ + g₂ = (3, 5).
//
// Step 1, L = (1, 0.8): r̃ = (0.5, 0.8), r = (0.76923076923076923077,
// 1.2307692307692307692), G = (4.9849699398797595190,
// 1.0030060120240480962), Ḡ = 2.9939879759519038076, targets
// Ḡ·r^1.5 = (2.0199239723211062846, 4.0880386898621479675), signs
// (+, −), so w becomes (0.99199398797595190381,
// 1.0040060120240480962) before renormalising and
// (0.99398195187971132646, 1.0060180481202886735) after. d uses the
// weights from step 0: (2.9909819639278557114, 4.9909819639278557114).
func TestGradNormHandWorked(t *testing.T) {
	var gn GradNorm
	g := [][]float64{{3, 4}, {0, 1}}
	d := make([]float64, 2)
	const tol = 1e-15
	if err := gn.Aggregate(d, g, Step{Losses: []float64{2, 1}}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "d₁ at step 0", d[0], 3, 0)
	assertClose(t, "d₂ at step 0", d[1], 5, 0)
	st := gn.State()
	assertClose(t, "K", st[0], 2, 0)
	assertClose(t, "flag", st[1], 1, 0)
	assertClose(t, "w₁ after step 0", st[2], 0.99699398797595190381, tol)
	assertClose(t, "w₂ after step 0", st[3], 1.0030060120240480962, tol)
	assertClose(t, "L₁(0)", st[4], 2, 0)
	assertClose(t, "L₂(0)", st[5], 1, 0)

	if err := gn.Aggregate(d, g, Step{Losses: []float64{1, 0.8}, Index: 1}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "d₁ at step 1", d[0], 2.9909819639278557114, 4*tol)
	assertClose(t, "d₂ at step 1", d[1], 4.9909819639278557114, 4*tol)
	st = gn.State()
	assertClose(t, "w₁ after step 1", st[2], 0.99398195187971132646, tol)
	assertClose(t, "w₂ after step 1", st[3], 1.0060180481202886735, tol)
	assertClose(t, "L₁(0) after step 1", st[4], 2, 0)
}

// TestGradNormFloor checks the weight floor: with rate 1 the step of
// the hand-worked case takes w₁ = 1 − 5 below zero, so w₁ is held at
// 1e-3 and w₂ = 1 + 1 = 2; renormalised to sum 2 they are 0.002/2.001
// and 4/2.001.
func TestGradNormFloor(t *testing.T) {
	gn := GradNorm{LearningRate: 1}
	if err := gn.Aggregate(make([]float64, 2), [][]float64{{3, 4}, {0, 1}}, Step{Losses: []float64{2, 1}}); err != nil {
		t.Fatal(err)
	}
	st := gn.State()
	assertClose(t, "w₁", st[2], 0.002/2.001, 1e-16)
	assertClose(t, "w₂", st[3], 4/2.001, 1e-15)
}

// TestGradNormLossGradient checks ∂L_grad/∂w against central
// differences of L_grad at random points (w in (0.1, 2), norms in
// (0, 3), targets in (0, 4)) kept 1e-3 or more from the kinks of |·|,
// beyond the step 1e-4 times a norm: L_grad is linear in each wₖ
// between kinks, so the difference is exact up to rounding, about
// 2e-16·L_grad/1e-4 < 1e-10 for L_grad < 20.
func TestGradNormLossGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const k = 4
	w, norms, targets := make([]float64, k), make([]float64, k), make([]float64, k)
	grad := make([]float64, k)
	for trial := 0; trial < 50; {
		for i := range w {
			w[i] = 0.1 + 1.9*rng.Float64()
			norms[i] = 3 * rng.Float64()
			targets[i] = 4 * rng.Float64()
		}
		nearKink := false
		for i := range w {
			nearKink = nearKink || math.Abs(w[i]*norms[i]-targets[i]) < 1e-3
		}
		if nearKink {
			continue
		}
		trial++
		gradNormLossGradient(grad, w, norms, targets)
		for i := range w {
			wi := w[i]
			f := func(x float64) float64 {
				w[i] = x
				defer func() { w[i] = wi }()
				return gradNormLoss(w, norms, targets)
			}
			fd := centralDifference(f, wi, 1e-4)
			assertClose(t, "∂L_grad/∂w", grad[i], fd, 1e-9)
		}
	}
}

// TestGradNormWeightsSumToK checks the renormalisation over a run.
func TestGradNormWeightsSumToK(t *testing.T) {
	gs, steps := weightingSequence(30)
	gn := GradNorm{LearningRate: 0.05}
	d := make([]float64, len(gs[0][0]))
	for i := range gs {
		if err := gn.Aggregate(d, gs[i], steps[i]); err != nil {
			t.Fatal(err)
		}
		st := gn.State()
		sum := 0.0
		for _, w := range st[2 : 2+3] {
			if !(w > 0) {
				t.Fatalf("step %d: weight %v", i, w)
			}
			sum += w
		}
		assertClose(t, "Σw", sum, 3, 1e-14)
	}
}

// TestGradNormZeroLosses checks that all-zero losses after the first
// step give equal rates (rₖ = 1) rather than 0/0, and that a zero loss
// at the first step, which leaves L(0) undefined, is an error.
func TestGradNormZeroLosses(t *testing.T) {
	var gn GradNorm
	g := [][]float64{{1, 0}, {0, 2}}
	d := make([]float64, 2)
	if err := gn.Aggregate(d, g, Step{Losses: []float64{1, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := gn.Aggregate(d, g, Step{Losses: []float64{0, 0}, Index: 1}); err != nil {
		t.Fatal(err)
	}
	for _, v := range gn.State() {
		if math.IsNaN(v) {
			t.Fatalf("state %v", gn.State())
		}
	}
	var fresh GradNorm
	if err := fresh.Aggregate(d, g, Step{Losses: []float64{0, 1}}); err == nil {
		t.Error("a zero first-step loss was accepted")
	}
	if fresh.State() != nil {
		t.Errorf("a rejected first step left state %v", fresh.State())
	}
	neg := GradNorm{Alpha: -1}
	if err := neg.Aggregate(d, g, Step{Losses: []float64{1, 1}}); err == nil {
		t.Error("a negative Alpha was accepted")
	}
}

func TestGradNormState(t *testing.T) {
	checkStateRoundTrip(t, freshGradNorm)
	checkSetStateRejects(t, freshGradNorm)
	for name, s := range map[string][]float64{
		"flag 2":        {2, 2, 1, 1, 1, 1},
		"zero weight":   {2, 1, 0, 2, 1, 1},
		"negative w":    {2, 1, -1, 3, 1, 1},
		"zero L(0)":     {2, 1, 1, 1, 0, 1},
		"negative L(0)": {2, 1, 1, 1, 1, -2},
	} {
		var gn GradNorm
		if err := gn.SetState(s); err == nil {
			t.Errorf("%s: SetState accepted %v", name, s)
		}
	}
}

func TestGradNormErrors(t *testing.T) { checkInputErrors(t, asAggregator(freshGradNorm), true) }
func TestGradNormNoNaN(t *testing.T)  { checkNoNaN(t, asAggregator(freshGradNorm)) }
func TestGradNormOdd(t *testing.T)    { checkOdd(t, asAggregator(freshGradNorm)) }
