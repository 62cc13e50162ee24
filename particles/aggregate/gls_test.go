package aggregate

import (
	"math"
	"testing"
)

func freshGLS() Aggregator { return &GLS{} }

// TestGLSHandWorked checks two tasks with losses (1, 4): the geometric
// mean is 2, so w = (2/(2·1), 2/(2·4)) = (1, ¼); and three with
// (2, 2, 2), the mean's weights 1/3. The identity gradients make d the
// weights. Tolerance: 1e-15, a few ulps.
func TestGLSHandWorked(t *testing.T) {
	for _, c := range []struct {
		losses, want []float64
	}{
		{[]float64{1, 4}, []float64{1, 0.25}},
		{[]float64{2, 2, 2}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		// A single task: w = L/L = 1.
		{[]float64{0.3}, []float64{1}},
	} {
		d := make([]float64, len(c.losses))
		if err := (&GLS{}).Aggregate(d, identityGradients(len(c.losses)), Step{Losses: c.losses}); err != nil {
			t.Fatal(err)
		}
		for i := range d {
			assertClose(t, "w", d[i], c.want[i], 1e-15)
		}
	}
}

// TestGLSGradientOfGeometricMean checks each weight against a central
// difference of the geometric mean (Πₖ Lₖ)^(1/K) in Lₖ (step 1e-5
// relative, error O(h²), tolerance 1e-9 relative), on losses spread over
// 10⁸ (where the product of the losses alone would lose digits), and
// that scaling every loss by 10⁶ leaves the weights unchanged (1e-12
// relative).
func TestGLSGradientOfGeometricMean(t *testing.T) {
	losses := []float64{1e-4, 0.5, 3, 2e4}
	k := len(losses)
	geometric := func(l []float64) float64 {
		s := 0.0
		for _, v := range l {
			s += math.Log(v)
		}
		return math.Exp(s / float64(len(l)))
	}
	d := make([]float64, k)
	if err := (&GLS{}).Aggregate(d, identityGradients(k), Step{Losses: losses}); err != nil {
		t.Fatal(err)
	}
	for i := range k {
		f := func(x float64) float64 {
			l := append([]float64(nil), losses...)
			l[i] = x
			return geometric(l)
		}
		fd := centralDifference(f, losses[i], 1e-5*losses[i])
		assertClose(t, "∂L/∂Lₖ", d[i], fd, 1e-9*math.Abs(fd))
	}
	scaled := make([]float64, k)
	for i, l := range losses {
		scaled[i] = 1e6 * l
	}
	ds := make([]float64, k)
	if err := (&GLS{}).Aggregate(ds, identityGradients(k), Step{Losses: scaled}); err != nil {
		t.Fatal(err)
	}
	for i := range k {
		assertClose(t, "w after scaling the losses", ds[i], d[i], 1e-12*d[i])
	}
}

// TestGLSZeroLoss checks that a zero loss, where the geometric mean has
// no gradient, is an error.
func TestGLSZeroLoss(t *testing.T) {
	if err := (&GLS{}).Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{0, 1}}); err == nil {
		t.Error("a zero loss was accepted")
	}
}

func TestGLSErrors(t *testing.T) { checkInputErrors(t, freshGLS, true) }
func TestGLSOdd(t *testing.T)    { checkOdd(t, freshGLS) }
func TestGLSNoNaN(t *testing.T)  { checkNoNaN(t, freshGLS) }
