package metrics

import (
	"fmt"
	"math"
)

// Temperature scaling (Guo et al., "On calibration of modern neural
// networks", ICML 2017) divides a classifier's logits by one scalar T
// fitted on held-out data: T > 1 softens over-confident predictions, T < 1
// sharpens under-confident ones, and the predicted class never changes.
// An ensemble's prediction is the mean of its members' probabilities,
// which has no logits of its own; its log-probabilities stand in for them
// (softmax(log p / T)), as in Ashukha et al., "Pitfalls of in-domain
// uncertainty estimation and ensembling in deep learning" (ICLR 2020).

// The range a fitted temperature is searched in. The NLL is convex in 1/T
// (a log-sum-exp of a linear function of 1/T, minus a linear term), hence
// unimodal in log T, so a golden-section search on log T finds its
// minimum to TemperatureTol.
const (
	MinTemperature = 0.05
	MaxTemperature = 20
	// TemperatureTol is the width, in log T, below which the search stops.
	TemperatureTol = 1e-6
)

// AtTemperatureBound reports whether t is at an end of the range a
// temperature is searched in, within 1e-5 in log T (ten times the
// search's tolerance): a fit that ends there found no minimum inside.
func AtTemperatureBound(t float64) bool {
	l := math.Log(t)
	return math.Abs(l-math.Log(MinTemperature)) <= 1e-5 || math.Abs(l-math.Log(MaxTemperature)) <= 1e-5
}

// Temper writes softmax(log p / t) of each row of probs (width classes)
// into dst, which may be probs. Each probability is clamped at MinProb
// before its logarithm, as the NLL clamps it. t = 1 gives the rows back
// renormalised.
func Temper(dst, probs []float64, classes int, t float64) {
	if len(dst) != len(probs) || classes <= 0 || len(probs)%classes != 0 {
		panic(fmt.Sprintf("metrics: Temper of %d probabilities into %d, %d classes", len(probs), len(dst), classes))
	}
	inv := 1 / t
	for i := 0; i < len(probs); i += classes {
		row, out := probs[i:i+classes], dst[i:i+classes]
		m := math.Inf(-1)
		for k, p := range row {
			out[k] = math.Log(max(p, MinProb)) * inv
			m = max(m, out[k])
		}
		s := 0.0
		for k := range out {
			out[k] = math.Exp(out[k] - m)
			s += out[k]
		}
		for k := range out {
			out[k] /= s
		}
	}
}

// TemperedNLL is the mean negative log-likelihood of labels under
// softmax(log p / t), computed without storing the tempered rows.
func TemperedNLL(probs []float64, labels []int, classes int, t float64) (float64, error) {
	logp, err := logRows(probs, labels, classes)
	if err != nil {
		return 0, err
	}
	return temperedNLL(logp, labels, classes, t), nil
}

// logRows checks probs against labels and returns log max(p, MinProb).
func logRows(probs []float64, labels []int, classes int) ([]float64, error) {
	n := len(labels)
	if n == 0 || classes <= 0 || len(probs) != n*classes {
		return nil, fmt.Errorf("metrics: %d probabilities for %d examples of %d classes", len(probs), n, classes)
	}
	for i, y := range labels {
		if y < 0 || y >= classes {
			return nil, fmt.Errorf("metrics: label %d of example %d is not a class 0..%d", y, i, classes-1)
		}
	}
	logp := make([]float64, len(probs))
	for i, p := range probs {
		logp[i] = math.Log(max(p, MinProb))
	}
	return logp, nil
}

// temperedNLL is TemperedNLL on rows of log-probabilities.
func temperedNLL(logp []float64, labels []int, classes int, t float64) float64 {
	inv := 1 / t
	var nll float64
	for i, y := range labels {
		row := logp[i*classes : (i+1)*classes]
		m := math.Inf(-1)
		for _, z := range row {
			m = max(m, z)
		}
		s := 0.0
		for _, z := range row {
			s += math.Exp((z - m) * inv)
		}
		// −log softmax_y(z/t) = log Σ exp((z_k − m)/t) − (z_y − m)/t
		nll += math.Log(s) - (row[y]-m)*inv
	}
	return nll / float64(len(labels))
}

// FitTemperature returns the temperature in [MinTemperature,
// MaxTemperature] that minimises the NLL of labels under
// softmax(log p / T), p the rows of probs. It never returns a temperature
// whose NLL is above that of T = 1: where the search's end point is not
// better (a flat or rounding-bound objective), it returns 1.
func FitTemperature(probs []float64, labels []int, classes int) (float64, error) {
	logp, err := logRows(probs, labels, classes)
	if err != nil {
		return 0, err
	}
	nll := func(logT float64) float64 { return temperedNLL(logp, labels, classes, math.Exp(logT)) }
	base := nll(0)
	if math.IsNaN(base) || math.IsInf(base, 0) {
		return 0, fmt.Errorf("metrics: the NLL at temperature 1 is %v", base)
	}
	// Golden-section search on log T.
	const invPhi = 0.6180339887498949 // (√5 − 1)/2
	a, b := math.Log(MinTemperature), math.Log(MaxTemperature)
	c, d := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, fd := nll(c), nll(d)
	for b-a > TemperatureTol {
		if fc <= fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = nll(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = nll(d)
		}
	}
	logT := (a + b) / 2
	if !(nll(logT) < base) {
		return 1, nil
	}
	return math.Exp(logT), nil
}
