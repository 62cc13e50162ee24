// Package metrics scores predictions per task: for classification the
// accuracy, Brier score, expected calibration error and negative
// log-likelihood of predicted class probabilities; for regression the mean
// squared error. An ensemble is scored by the mean of its members'
// probabilities (Mean), as in the paper.
//
// The scores are finite for any finite probabilities: the negative
// log-likelihood clamps each probability of the true class at MinProb
// (p ≥ 1e-12), so an example contributes at most −log(1e-12) ≈ 27.63.
// Without it, a confidently wrong prediction whose probability underflows
// to 0 (a softmax logit gap above about 745, easily reached by a diverging
// run) gives +Inf, which JSON cannot encode. The clamp is on the
// probability rather than on the log-softmax, as PyTorch's cross-entropy
// does implicitly, because an ensemble is scored by the mean of its
// members' probabilities, which has no log-domain form; 1e-12 is far
// below any probability a calibrated model assigns, so it changes the
// NLL of a sensible model by nothing.
package metrics

import (
	"fmt"
	"math"
)

// MinProb is the least probability the NLL takes for the true class;
// see the package documentation.
const MinProb = 1e-12

// Bins is the number of equal-width confidence bins of the ECE.
const Bins = 10

// Classification holds the scores of class probabilities against labels.
type Classification struct {
	Accuracy float64 `json:"accuracy"`
	// Brier is the mean over examples of the squared Euclidean distance
	// between the probability vector and the one-hot label.
	Brier float64 `json:"brier"`
	// ECE is Σ_b (|B_b|/N)·|accuracy(B_b) − confidence(B_b)| over Bins
	// bins of the top-class confidence, bin m holding ((m−1)/10, m/10].
	ECE float64 `json:"ece"`
	// NLL is the mean of −log max(p(label), MinProb).
	NLL float64 `json:"nll"`
	// Confidence is the mean top-class probability: above Accuracy, the
	// predictions are overconfident; below, underconfident.
	Confidence float64 `json:"confidence"`
	// Bins are the ECE's bins, for reliability diagrams.
	Bins [Bins]BinStat `json:"-"`
}

// BinStat describes one confidence bin: how many examples fell in it, and
// their mean accuracy and top-class confidence.
type BinStat struct {
	Count                int
	Accuracy, Confidence float64
}

// Classify scores probs (N × classes, row-major, rows summing to 1)
// against labels. A row's predicted class is its first largest entry.
func Classify(probs []float64, labels []int, classes int) (Classification, error) {
	n := len(labels)
	if n == 0 || len(probs) != n*classes {
		return Classification{}, fmt.Errorf("metrics: %d probabilities for %d examples of %d classes", len(probs), n, classes)
	}
	var c Classification
	var binCount [Bins]int
	var binCorrect, binConf [Bins]float64
	for i, y := range labels {
		if y < 0 || y >= classes {
			return Classification{}, fmt.Errorf("metrics: label %d of example %d is not a class 0..%d", y, i, classes-1)
		}
		row := probs[i*classes : (i+1)*classes]
		best := 0
		for k, p := range row {
			if p > row[best] {
				best = k
			}
			d := p
			if k == y {
				d = p - 1
			}
			c.Brier += d * d
		}
		correct := 0.0
		if best == y {
			correct = 1
		}
		c.Accuracy += correct
		c.NLL -= math.Log(max(row[y], MinProb))
		c.Confidence += row[best]
		b := Bin(row[best])
		binCount[b]++
		binCorrect[b] += correct
		binConf[b] += row[best]
	}
	for b := range Bins {
		if binCount[b] > 0 {
			c.ECE += math.Abs(binCorrect[b]-binConf[b]) / float64(n)
			c.Bins[b] = BinStat{binCount[b], binCorrect[b] / float64(binCount[b]), binConf[b] / float64(binCount[b])}
		}
	}
	c.Accuracy /= float64(n)
	c.Brier /= float64(n)
	c.NLL /= float64(n)
	c.Confidence /= float64(n)
	return c, nil
}

// Bin returns the ECE bin of a confidence: m−1 for a confidence in
// ((m−1)/10, m/10], and 0 for 0. The edges are compared as the decimal
// fractions they are (float64(m)/10), so 0.1 falls in bin 0 and 0.3 in
// bin 2, whatever the rounding of conf·10.
func Bin(conf float64) int {
	b := int(math.Ceil(conf*Bins)) - 1
	if b > 0 && conf <= float64(b)/Bins {
		b--
	}
	if b < Bins-1 && conf > float64(b+1)/Bins {
		b++
	}
	return max(0, min(Bins-1, b))
}

// Regression holds the score of predictions against targets.
type Regression struct {
	MSE float64 `json:"mse"`
}

// Score is a task's score: exactly one of the two is set. In JSON its
// fields appear flat: {"accuracy":…,"brier":…,"ece":…,"nll":…} or
// {"mse":…}.
type Score struct {
	*Classification
	*Regression
}

// Regress scores predictions against targets.
func Regress(pred, target []float64) (Regression, error) {
	if len(pred) != len(target) || len(pred) == 0 {
		return Regression{}, fmt.Errorf("metrics: %d predictions for %d targets", len(pred), len(target))
	}
	var r Regression
	for i, p := range pred {
		d := p - target[i]
		r.MSE += d * d
	}
	r.MSE /= float64(len(pred))
	return r, nil
}

// Softmax writes the row-wise softmax of logits (rows of width classes)
// into dst, subtracting each row's maximum first so that exp stays finite.
func Softmax(dst, logits []float64, classes int) {
	for i := 0; i < len(logits); i += classes {
		row, out := logits[i:i+classes], dst[i:i+classes]
		m := math.Inf(-1)
		for _, z := range row {
			m = max(m, z)
		}
		s := 0.0
		for k, z := range row {
			out[k] = math.Exp(z - m)
			s += out[k]
		}
		for k := range out {
			out[k] /= s
		}
	}
}

// Mean writes the element-wise mean of members into dst: the ensemble's
// prediction from its members' probabilities (or regression outputs).
func Mean(dst []float64, members [][]float64) {
	clear(dst)
	for _, m := range members {
		for i, v := range m {
			dst[i] += v
		}
	}
	for i := range dst {
		dst[i] /= float64(len(members))
	}
}

// Labelled keeps the examples that have a label: members are the
// predictions of an ensemble's members (rows of width values per
// example) and labels one per example, NaN where it is missing (a task
// that some examples have no label for). Without a missing label it
// returns its arguments; where every label is missing, an error.
func Labelled(members [][]float64, labels []float64, width int) ([][]float64, []float64, error) {
	n := 0
	for _, y := range labels {
		if !math.IsNaN(y) {
			n++
		}
	}
	switch {
	case n == len(labels):
		return members, labels, nil
	case n == 0:
		return nil, nil, fmt.Errorf("metrics: none of the %d examples has a label", len(labels))
	}
	ys := make([]float64, 0, n)
	kept := make([][]float64, len(members))
	for m := range kept {
		kept[m] = make([]float64, 0, n*width)
	}
	for i, y := range labels {
		if math.IsNaN(y) {
			continue
		}
		ys = append(ys, y)
		for m, p := range members {
			kept[m] = append(kept[m], p[i*width:(i+1)*width]...)
		}
	}
	return kept, ys, nil
}
