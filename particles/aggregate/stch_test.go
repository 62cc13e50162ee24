package aggregate

import (
	"math"
	"testing"
)

func freshSTCH() Stateful { return &STCH{Warmup: 1} }

// TestSTCHPhases checks each phase by hand with Warmup 1, μ = 1 and two
// steps an epoch, on identity gradients (d is the weights): epoch 0 sums
// the log losses (w = 1/L); epoch 1 does too and averages its losses,
// (1, 4) and (3, 2), into the nadir n = (2, 3); from epoch 2 on, losses
// (4, 3) give log(L/n) = (log 2, 0), softmax (2/3, 1/3), and
// w = 2·(2/3)/4, 2·(1/3)/3 = (1/3, 2/9). Tolerance: 1e-15.
func TestSTCHPhases(t *testing.T) {
	a := &STCH{Warmup: 1}
	steps := []struct {
		losses, want []float64
	}{
		{[]float64{2, 5}, []float64{0.5, 0.2}},
		{[]float64{4, 8}, []float64{0.25, 0.125}},
		{[]float64{1, 4}, []float64{1, 0.25}},
		{[]float64{3, 2}, []float64{1.0 / 3, 0.5}},
		{[]float64{4, 3}, []float64{1.0 / 3, 2.0 / 9}},
	}
	d := make([]float64, 2)
	for i, st := range steps {
		if err := a.Aggregate(d, identityGradients(2), Step{Losses: st.losses, Index: i, StepsPerEpoch: 2}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		for j := range d {
			assertClose(t, "w", d[j], st.want[j], 1e-15)
		}
	}
	if s := a.State(); s[1] != 2 || s[2] != 4 || s[3] != 6 {
		t.Errorf("state %v, want K 2, count 2, sums (4, 6)", s)
	}
}

// TestSTCHGradientOfSmoothedMaximum checks the weights after the warm-up
// against central differences of L = K·μ·log Σₖ exp(log(Lₖ/nₖ)/μ) in
// each Lₖ (step 1e-6 relative, tolerance 1e-8 relative), for μ = 0.1, 1
// and 10; and that a small μ puts nearly all the weight on the task
// farthest above its nadir value.
func TestSTCHGradientOfSmoothedMaximum(t *testing.T) {
	nadir := []float64{0.5, 2, 1}
	losses := []float64{0.6, 1.5, 1.3}
	k := len(losses)
	for _, mu := range []float64{0.1, 1, 10} {
		a := &STCH{Mu: mu, Warmup: -1}
		if err := a.SetState(append([]float64{3, 1}, nadir...)); err != nil {
			t.Fatal(err)
		}
		d := make([]float64, k)
		if err := a.Aggregate(d, identityGradients(k), Step{Losses: losses, Index: 1, StepsPerEpoch: 1}); err != nil {
			t.Fatal(err)
		}
		smoothed := func(l []float64) float64 {
			s := 0.0
			for i, v := range l {
				s += math.Exp(math.Log(v/nadir[i]) / mu)
			}
			return float64(k) * mu * math.Log(s)
		}
		for i := range k {
			f := func(x float64) float64 {
				l := append([]float64(nil), losses...)
				l[i] = x
				return smoothed(l)
			}
			fd := centralDifference(f, losses[i], 1e-6*losses[i])
			assertClose(t, "∂L/∂Lₖ", d[i], fd, 1e-8*math.Abs(fd))
		}
		if mu == 0.1 {
			// log(L/n) = (0.182, −0.288, 0.262): task 2 leads by 0.08,
			// e^(0.8) ≈ 2.2 times task 0's softmax weight; check the order.
			if !(d[2]*losses[2] > d[0]*losses[0] && d[0]*losses[0] > d[1]*losses[1]) {
				t.Errorf("μ = 0.1: softmax weights %v not in the order of log(L/n)", []float64{d[0] * losses[0], d[1] * losses[1], d[2] * losses[2]})
			}
		}
	}
}

// TestSTCHRefuses checks the inputs STCH cannot use: no epochs, a zero
// loss, μ ≤ 0, a step past the nadir epoch without its losses, and
// states with a fractional count or sums that do not fit the count.
func TestSTCHRefuses(t *testing.T) {
	g, losses := identityGradients(2), []float64{1, 2}
	for name, c := range map[string]struct {
		a *STCH
		s Step
	}{
		"no epochs":   {&STCH{}, Step{Losses: losses}},
		"zero loss":   {&STCH{}, Step{Losses: []float64{0, 1}, StepsPerEpoch: 1}},
		"μ < 0":       {&STCH{Mu: -1}, Step{Losses: losses, StepsPerEpoch: 1}},
		"no nadir":    {&STCH{Warmup: 1}, Step{Losses: losses, Index: 5, StepsPerEpoch: 1}},
		"μ = +Inf":    {&STCH{Mu: math.Inf(1)}, Step{Losses: losses, StepsPerEpoch: 1}},
		"nadir of 0s": {&STCH{}, Step{Losses: losses, Index: 9, StepsPerEpoch: 1}},
	} {
		if err := c.a.Aggregate(make([]float64, 2), g, c.s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for name, s := range map[string][]float64{
		"count 1.5":          {2, 1.5, 1, 1},
		"negative count":     {2, -1, 1, 1},
		"sums without count": {2, 0, 1, 1},
		"count without sums": {2, 3, 0, 1},
		"negative sum":       {2, 3, -1, 1},
	} {
		var a STCH
		if err := a.SetState(s); err == nil {
			t.Errorf("%s: SetState accepted %v", name, s)
		}
	}
}

func TestSTCHState(t *testing.T) {
	checkStateRoundTrip(t, freshSTCH)
	checkSetStateRejects(t, freshSTCH)
}

func TestSTCHErrors(t *testing.T) { checkInputErrors(t, asAggregator(freshSTCH), true) }
func TestSTCHOdd(t *testing.T)    { checkOdd(t, asAggregator(freshSTCH)) }
func TestSTCHNoNaN(t *testing.T)  { checkNoNaN(t, asAggregator(freshSTCH)) }
