package metrics

import (
	"math"
	"testing"
)

func close(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Four examples over three classes, scored by hand:
//
//	probs            label  top  conf  correct  Brier                    −log p
//	0.7 0.2 0.1      0      0    0.7   yes      0.09+0.04+0.01 = 0.14    0.356675
//	0.5 0.4 0.1      1      0    0.5   no       0.25+0.36+0.01 = 0.62    0.916291
//	0.1 0.1 0.8      2      2    0.8   yes      0.01+0.01+0.04 = 0.06    0.223144
//	0.3 0.3 0.4      0      2    0.4   no       0.49+0.09+0.16 = 0.74    1.203973
//
// accuracy 2/4; Brier 1.56/4 = 0.39; NLL 2.700082/4; every example alone
// in its bin, so ECE = (0.3 + 0.5 + 0.2 + 0.4)/4 = 0.35; mean confidence
// (0.7 + 0.5 + 0.8 + 0.4)/4 = 0.6.
func TestClassifyByHand(t *testing.T) {
	probs := []float64{0.7, 0.2, 0.1, 0.5, 0.4, 0.1, 0.1, 0.1, 0.8, 0.3, 0.3, 0.4}
	c, err := Classify(probs, []int{0, 1, 2, 0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := Classification{Accuracy: 0.5, Brier: 0.39, ECE: 0.35, NLL: 2.700082 / 4, Confidence: 0.6}
	if !close(c.Confidence, want.Confidence, 1e-15) || !close(c.Accuracy, want.Accuracy, 1e-15) || !close(c.Brier, want.Brier, 1e-15) ||
		!close(c.ECE, want.ECE, 1e-15) || !close(c.NLL, want.NLL, 1e-6) {
		t.Errorf("got %+v, want %+v", c, want)
	}
	// Bins 3, 4, 6, 7 hold one example each (confidences 0.4, 0.5, 0.7, 0.8).
	for b, want := range map[int]BinStat{3: {1, 0, 0.4}, 4: {1, 0, 0.5}, 6: {1, 1, 0.7}, 7: {1, 1, 0.8}, 0: {}, 9: {}} {
		if c.Bins[b] != want {
			t.Errorf("bin %d: %+v, want %+v", b, c.Bins[b], want)
		}
	}
}

func TestBinEdges(t *testing.T) {
	for _, tc := range []struct {
		conf float64
		bin  int
	}{
		{0, 0}, {0.05, 0},
		{0.1, 0}, // a uniform 10-class prediction: the first bin, ((0, 0.1]
		{math.Nextafter(0.1, 1), 1},
		{0.2, 1}, {0.3, 2}, // 0.3·10 rounds to 3.0000000000000004
		{math.Nextafter(0.3, 1), 3}, {0.6, 5}, {0.7, 6}, {0.95, 9}, {1, 9},
	} {
		if got := Bin(tc.conf); got != tc.bin {
			t.Errorf("Bin(%v) = %d, want %d", tc.conf, got, tc.bin)
		}
	}
	// Every edge m/10 belongs to bin m−1 and the next float above it to bin m.
	for m := 1; m <= Bins; m++ {
		edge := float64(m) / Bins
		if Bin(edge) != m-1 || (m < Bins && Bin(math.Nextafter(edge, 2)) != m) {
			t.Errorf("edge %v: bins %d and %d", edge, Bin(edge), Bin(math.Nextafter(edge, 2)))
		}
	}
}

// Uniform predictions over 10 classes sit at confidence exactly 0.1, in
// the first bin; with one label in ten right, that bin is calibrated.
// Ten examples at confidence 0.7, seven right, are calibrated too.
func TestPerfectCalibration(t *testing.T) {
	uniform := make([]float64, 10*10)
	for i := range uniform {
		uniform[i] = 0.1
	}
	// argmax of a uniform row is class 0: one of the ten labels is 0.
	c, err := Classify(uniform, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !close(c.ECE, 0, 1e-15) || !close(c.Accuracy, 0.1, 1e-15) || !close(c.NLL, math.Log(10), 1e-12) {
		t.Errorf("uniform: %+v", c)
	}
	var probs []float64
	var labels []int
	for i := range 10 {
		probs = append(probs, 0.7, 0.3)
		labels = append(labels, map[bool]int{true: 0, false: 1}[i < 7])
	}
	if c, err = Classify(probs, labels, 2); err != nil {
		t.Fatal(err)
	}
	// Brier: 7·(0.09+0.09) + 3·(0.49+0.49) = 4.2, over 10.
	if !close(c.ECE, 0, 1e-15) || !close(c.Accuracy, 0.7, 1e-15) || !close(c.Brier, 0.42, 1e-15) {
		t.Errorf("0.7 with 7 of 10 right: %+v", c)
	}
}

func TestClassifyRejectsBadInput(t *testing.T) {
	if _, err := Classify([]float64{0.5, 0.5}, []int{2}, 2); err == nil {
		t.Error("label 2 of 2 classes accepted")
	}
	if _, err := Classify([]float64{0.5}, []int{0}, 2); err == nil {
		t.Error("short probabilities accepted")
	}
}

func TestSoftmaxMeanRegress(t *testing.T) {
	p := make([]float64, 5)
	Softmax(p, []float64{0, math.Log(2), math.Log(3), 1000, 1000}[:3], 3)
	for k, want := range []float64{1.0 / 6, 2.0 / 6, 3.0 / 6} {
		if !close(p[k], want, 1e-15) {
			t.Errorf("softmax[%d] = %v, want %v", k, p[k], want)
		}
	}
	Softmax(p[3:], []float64{1000, 1000}, 2) // overflows without the shift
	if p[3] != 0.5 || p[4] != 0.5 {
		t.Errorf("softmax of large logits: %v", p[3:])
	}
	m := make([]float64, 2)
	Mean(m, [][]float64{{0.2, 0.8}, {0.6, 0.4}})
	if !close(m[0], 0.4, 1e-15) || !close(m[1], 0.6, 1e-15) {
		t.Errorf("mean %v", m)
	}
	r, err := Regress([]float64{1, 2, 4}, []float64{1, 0, 1})
	if err != nil || !close(r.MSE, 13.0/3, 1e-15) {
		t.Errorf("MSE %v, %v; want 13/3", r.MSE, err)
	}
}

// A probability of 0 for the true class (a softmax that underflowed) must
// give a finite NLL, −log MinProb, so that the metrics encode as JSON.
func TestNLLClampsZeroProbability(t *testing.T) {
	c, err := Classify([]float64{1, 0, 0, 1}, []int{1, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Example 0 contributes −log 1e-12, example 1 contributes 0.
	want := -math.Log(MinProb) / 2
	if math.IsInf(c.NLL, 0) || math.IsNaN(c.NLL) || !close(c.NLL, want, 1e-12) {
		t.Errorf("NLL = %v, want %v", c.NLL, want)
	}
	if !close(-math.Log(MinProb), 27.631021115928547, 1e-12) {
		t.Errorf("−log MinProb = %v, want 27.631…", -math.Log(MinProb))
	}
}
