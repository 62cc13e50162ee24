package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func freshFAMO() Stateful { return &FAMO{} }

// TestFAMOHandWorked checks two steps of the default method on 2 tasks
// with identity gradients, so that d is c. References, worked by hand in
// 40-digit decimal arithmetic:
//
// Step 0, L = (1, 4): ξ = 0, z = (½, ½), c ∝ (½/1, ½/4), so c = (0.8, 0.2).
// ξ does not move: there is no previous step.
//
// Step 1, L = (0.5, 4): δ = (log 2, 0), Jᵀδ = z ⊙ (δ − zᵀδ) = (q, −q)
// with q = log 2 / 4 = 0.17328679513998632735; the first Adam step, with
// ξ = 0 so no decay term, moves each logit by −0.025·gᵢ/(|gᵢ| + 1e-8),
// so ξ = (−a, a) with a = 0.025·q/(q + 1e-8) = 0.024999998557305042366;
// z₁ = 1/(1 + e^(2a)) = 0.48750260423668648079 and c ∝ (z₁/0.5, z₂/4):
// c = (0.88385376125614912527, 0.11614623874385087473). Task 1, whose
// loss fell, loses weight.
func TestFAMOHandWorked(t *testing.T) {
	var f FAMO
	g := identityGradients(2)
	d := make([]float64, 2)
	if err := f.Aggregate(d, g, Step{Losses: []float64{1, 4}}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "c₁ at step 0", d[0], 0.8, 1e-16)
	assertClose(t, "c₂ at step 0", d[1], 0.2, 1e-16)
	if err := f.Aggregate(d, g, Step{Losses: []float64{0.5, 4}, Index: 1}); err != nil {
		t.Fatal(err)
	}
	// Adam divides √v by √(1 − β₂), each rounded: a few ulps of 0.025
	// (3.5e-18 each) apart from the exact value.
	st := f.State()
	assertClose(t, "ξ₁ after step 1", st[3], -0.024999998557305042366, 1e-16)
	assertClose(t, "ξ₂ after step 1", st[4], 0.024999998557305042366, 1e-16)
	assertClose(t, "c₁ at step 1", d[0], 0.88385376125614912527, 1e-15)
	assertClose(t, "c₂ at step 1", d[1], 0.11614623874385087473, 1e-15)
}

// TestFAMOWeightDecay checks that γ enters Adam's gradient as an L2
// term, PyTorch's Adam rather than AdamW: from ξ = (0.3, −0.3) with the
// losses unchanged (δ = 0) the gradient is γξ = (0.003, −0.003), and
// the first Adam step moves ξ₁ by −0.025·0.003/(0.003 + 1e-8), to
// 0.27500008333305555648 (40-digit decimal arithmetic). With WeightDecay
// negative ξ stays where it is.
func TestFAMOWeightDecay(t *testing.T) {
	start := []float64{2, 1, 0, 0.3, -0.3, 0, 0, 0, 0, 1, 1}
	var f FAMO
	if err := f.SetState(start); err != nil {
		t.Fatal(err)
	}
	if err := f.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{1, 1}}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "ξ₁", f.State()[3], 0.27500008333305555648, 1e-16)
	assertClose(t, "ξ₂", f.State()[4], -0.27500008333305555648, 1e-16)

	none := FAMO{WeightDecay: -1}
	if err := none.SetState(start); err != nil {
		t.Fatal(err)
	}
	if err := none.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{1, 1}}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "ξ₁ without decay", none.State()[3], 0.3, 0)
}

// TestFAMOLogitGradient checks Jᵀδ against central differences of
// δᵀ·softmax(ξ) at random ξ and δ, step 1e-5: the truncation error is
// h²/6 times a third derivative bounded by a few |δ|, and rounding adds
// about 1e-16/h, so 1e-9 covers both.
func TestFAMOLogitGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const k = 4
	xi, delta, z, grad := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	for range 20 {
		for i := range xi {
			xi[i] = 2 * rng.NormFloat64()
			delta[i] = rng.NormFloat64()
		}
		softmaxInto(z, xi)
		famoLogitGradient(grad, z, delta)
		for i := range xi {
			xii := xi[i]
			f := func(x float64) float64 {
				xi[i] = x
				defer func() { xi[i] = xii }()
				p := make([]float64, k)
				softmaxInto(p, xi)
				s := 0.0
				for j := range p {
					s += delta[j] * p[j]
				}
				return s
			}
			assertClose(t, "(Jᵀδ)ᵢ", grad[i], centralDifference(f, xii, 1e-5), 1e-9)
		}
	}
}

// TestFAMOBalances runs FAMO on losses of which one falls and one
// stays, and checks the falling task's logit ends below the other's,
// the behaviour the method is built for.
func TestFAMOBalances(t *testing.T) {
	var f FAMO
	d := make([]float64, 2)
	for i := range 50 {
		if err := f.Aggregate(d, identityGradients(2), Step{Losses: []float64{math.Pow(0.9, float64(i)), 1}, Index: i}); err != nil {
			t.Fatal(err)
		}
	}
	if st := f.State(); !(st[3] < st[4]) {
		t.Errorf("ξ = (%v, %v): the falling task did not lose weight", st[3], st[4])
	}
}

func TestFAMOZeroLoss(t *testing.T) {
	var f FAMO
	if err := f.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{0, 1}}); err == nil {
		t.Error("a zero loss was accepted")
	}
}

func TestFAMOState(t *testing.T) {
	checkStateRoundTrip(t, freshFAMO)
	checkSetStateRejects(t, freshFAMO)
	for name, s := range map[string][]float64{
		"flag 2":          {1, 2, 0, 0, 0, 0, 1},
		"steps 0.5":       {1, 1, 0.5, 0, 0, 0, 1},
		"negative v":      {1, 1, 1, 0, 0, -1, 1},
		"zero prev loss":  {1, 1, 1, 0, 0, 0, 0},
		"negative steps":  {1, 1, -1, 0, 0, 0, 1},
		"negative K":      {-1, 1, 1, 0, 0, 0, 1},
		"wrong length K2": {2, 1, 1, 0, 0, 0, 1},
	} {
		var f FAMO
		if err := f.SetState(s); err == nil {
			t.Errorf("%s: SetState accepted %v", name, s)
		}
	}
}

func TestFAMOErrors(t *testing.T) { checkInputErrors(t, asAggregator(freshFAMO), true) }
func TestFAMOOdd(t *testing.T)    { checkOdd(t, asAggregator(freshFAMO)) }

// TestFAMONoNaN runs the shared hard gradient sets; FAMO needs positive
// losses, which they all are.
func TestFAMONoNaN(t *testing.T) { checkNoNaN(t, asAggregator(freshFAMO)) }
