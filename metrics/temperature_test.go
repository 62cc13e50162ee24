package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sampleAt draws n examples of c classes: logits z ~ N(0, spread²) per
// class, probs = softmax(z) (what the model reports), and labels drawn
// from softmax(z/t) (how the world behaves). The maximum-likelihood
// temperature of (probs, labels) then tends to t as n grows, since
// softmax(log softmax(z) / T) = softmax(z / T).
func sampleAt(rng *rand.Rand, n, c int, spread, t float64) ([]float64, []int) {
	z := make([]float64, n*c)
	for i := range z {
		z[i] = spread * rng.NormFloat64()
	}
	probs := make([]float64, n*c)
	Softmax(probs, z, c)
	world := make([]float64, n*c)
	for i := range z {
		z[i] /= t
	}
	Softmax(world, z, c)
	labels := make([]int, n)
	for i := range labels {
		u, acc := rng.Float64(), 0.0
		labels[i] = c - 1
		for k := range c {
			if acc += world[i*c+k]; u < acc {
				labels[i] = k
				break
			}
		}
	}
	return probs, labels
}

// A temperature the labels were drawn at is recovered: within 6 % with
// 20,000 examples of 10 classes (the estimate's sampling spread there is
// about 1-2 %, measured over seeds).
func TestFitTemperatureRecoversKnown(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, want := range []float64{0.5, 1, 1.7, 3} {
		probs, labels := sampleAt(rng, 20000, 10, 3, want)
		got, err := FitTemperature(probs, labels, 10)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got/want-1) > 0.06 {
			t.Errorf("labels drawn at T = %v: fitted %v", want, got)
		}
	}
}

// The fitted temperature never raises the NLL over T = 1, and it is a
// minimum: nudging it either way does not lower the NLL beyond the
// search's tolerance.
func TestFitTemperatureNeverWorse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 20 {
		n, c := 5+rng.IntN(300), 2+rng.IntN(9)
		probs, labels := sampleAt(rng, n, c, 0.1+4*rng.Float64(), 0.3+3*rng.Float64())
		got, err := FitTemperature(probs, labels, c)
		if err != nil {
			t.Fatal(err)
		}
		at := func(x float64) float64 {
			v, err := TemperedNLL(probs, labels, c, x)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if at(got) > at(1) {
			t.Errorf("trial %d: NLL %v at fitted T %v above %v at 1", trial, at(got), got, at(1))
		}
		if got <= MinTemperature*1.001 || got >= MaxTemperature*0.999 {
			continue // at the search's edge
		}
		for _, f := range []float64{0.99, 1.01} {
			if at(got*f) < at(got)-1e-9 {
				t.Errorf("trial %d: NLL %v at %v·T below %v at T = %v", trial, at(got*f), f, at(got), got)
			}
		}
	}
}

// Temper and TemperedNLL agree with Classify's NLL of the tempered rows;
// T = 1 gives the rows back; the predicted class never changes.
func TestTemper(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	probs, labels := sampleAt(rng, 500, 4, 2, 1)
	same := make([]float64, len(probs))
	Temper(same, probs, 4, 1)
	for i := range probs {
		if math.Abs(same[i]-probs[i]) > 1e-12 {
			t.Fatalf("T = 1: entry %d %v, was %v", i, same[i], probs[i])
		}
	}
	for _, temp := range []float64{0.3, 2.5} {
		tempered := make([]float64, len(probs))
		Temper(tempered, probs, 4, temp)
		c, err := Classify(tempered, labels, 4)
		if err != nil {
			t.Fatal(err)
		}
		nll, err := TemperedNLL(probs, labels, 4, temp)
		if err != nil || math.Abs(nll-c.NLL) > 1e-12 {
			t.Errorf("T = %v: TemperedNLL %v, Classify's NLL %v (err %v)", temp, nll, c.NLL, err)
		}
		before, _ := Classify(probs, labels, 4)
		if c.Accuracy != before.Accuracy {
			t.Errorf("T = %v changed the accuracy: %v, was %v", temp, c.Accuracy, before.Accuracy)
		}
	}
}

func TestFitTemperatureBadInput(t *testing.T) {
	if _, err := FitTemperature([]float64{0.5, 0.5}, []int{2}, 2); err == nil {
		t.Error("label 2 of 2 classes: no error")
	}
	if _, err := FitTemperature(nil, nil, 2); err == nil {
		t.Error("no examples: no error")
	}
}

// A fit that ends at an end of the search's range is at its bound; one a
// little inside (1e-4 in log T, a hundred times the search's tolerance)
// is not.
func TestAtTemperatureBound(t *testing.T) {
	for _, tc := range []struct {
		t    float64
		want bool
	}{
		{MinTemperature, true}, {MaxTemperature, true}, {19.99999, true}, {0.050000019, true},
		{MaxTemperature * math.Exp(-1e-4), false}, {MinTemperature * math.Exp(1e-4), false}, {1, false},
	} {
		if got := AtTemperatureBound(tc.t); got != tc.want {
			t.Errorf("AtTemperatureBound(%v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}
