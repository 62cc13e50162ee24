package experiment

import (
	"math"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
)

// sized is a validation split of n examples: only its size counts here.
type sized struct {
	data.Dataset
	n int
}

func (s sized) Len() int { return s.n }

// "proper" scores an epoch by each task's NLL (MSE) as a fraction of its
// epoch-1 value, averaged: by hand, epoch 2 is (0.5/1 + 4/4)/2 = 0.75,
// epoch 3 (0.6/1 + 2/4)/2 = 0.55, so epoch 3 beats epoch 2 although
// task a's NLL is worse there (its accuracy ties at 1); below MinProperExamples every epoch improves (best/ is the last).
func TestProperSelection(t *testing.T) {
	line := func(epoch int, task string, nll, mse float64) MetricsLine {
		l := MetricsLine{Epoch: epoch, Split: "valid", Task: task}
		if task == "b" {
			l.Score = metrics.Score{Regression: &metrics.Regression{MSE: mse}}
		} else {
			l.Score = metrics.Score{Classification: &metrics.Classification{NLL: nll, Accuracy: 1}}
		}
		return l
	}
	r := &Run{Best: ProperBest, ValidSet: sized{n: MinProperExamples}}
	r.history = []MetricsLine{line(1, "a", 1, 0), line(1, "b", 0, 4), line(2, "a", 0.5, 0), line(2, "b", 0, 4)}
	e3 := []MetricsLine{line(3, "a", 0.6, 0), line(3, "b", 0, 2)}
	for _, tc := range []struct {
		epoch int
		lines []MetricsLine
		want  float64
	}{
		{1, r.epochLines(1), -1},
		{2, r.epochLines(2), -0.75},
		{3, e3, -0.55},
	} {
		if got := r.selection(tc.lines); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("epoch %d: %v, want %v", tc.epoch, got, tc.want)
		}
	}
	r.epoch, r.bestEpoch = 2, 2
	if !r.improves(e3) {
		t.Error("epoch 3 does not improve on epoch 2")
	}
	r.Best, r.ValidSet = ProperBest, sized{n: MinProperExamples - 1}
	worse := []MetricsLine{line(3, "a", 5, 0), line(3, "b", 0, 40)}
	if !r.improves(worse) || r.SelectionWarning() == "" {
		t.Errorf("on %d validation examples: improves %v, warning %q; want the last epoch, warned", MinProperExamples-1, r.improves(worse), r.SelectionWarning())
	}
}

// A temperature is kept only where it lowers the NLL by more than twice
// the standard error of the per-example difference. Two classes, the
// label 0 throughout. By hand: p = 0.6 everywhere, tempered to 0.9,
// gains log 1.5 on every example, the differences' deviation 0: kept.
// The same gain on one example of 40 and a loss of 0.01 on the others:
// mean 0.0004, standard error 0.064/√40 = 0.010: not kept.
func TestSignificantTemperatures(t *testing.T) {
	probs := func(p ...float64) []float64 {
		var out []float64
		for _, v := range p {
			out = append(out, v, 1-v)
		}
		return out
	}
	n := 40
	labels := make([]int, n)
	flat, sharp, mixed := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		flat[i], sharp[i] = 0.6, 0.9
		mixed[i] = 0.6 * math.Exp(-0.01)
	}
	mixed[0] = 0.9
	if !significantGain(probs(flat...), probs(sharp...), labels, 2) {
		t.Error("a gain on every example is not significant")
	}
	if significantGain(probs(flat...), probs(mixed...), labels, 2) {
		t.Error("a gain on one example of 40 is significant")
	}
	if significantGain(probs(flat...), probs(flat...), labels, 2) {
		t.Error("no change is significant")
	}
}
