package experiment

import (
	"fmt"
	"math"
	"slices"

	"github.com/mtsgd/mtsgd/data"
)

// DefaultBest is the metric that selects best/ by default: the data set's
// (Dataset.Best), the ensemble's accuracy on a name no data set is
// registered under.
func DefaultBest(dataset string) string {
	if d, ok := datasets.Lookup(dataset); ok && d.Best != "" {
		return d.Best
	}
	return "accuracy"
}

// MinSelectionExamples is the smallest validation split whose scores
// choose best/ without a warning (SelectionWarning).
const MinSelectionExamples = 30

// Selection says in words how best/ is chosen, for the log.
func (r *Run) Selection() string {
	if r.ValidSet == nil {
		return "best/ is the last epoch: there is no validation split, and the test split never chooses"
	}
	what := r.Best
	switch {
	case r.lastEpochRule():
		return fmt.Sprintf("best/ is the last epoch: the validation split has %d examples, fewer than the %d on which proper scores choose an epoch", r.ValidSet.Len(), MinProperExamples)
	case r.Best == ProperBest:
		return "best/ is the epoch with the lowest validation proper score (NLL; a regression task's MSE) as a fraction of its epoch-1 value, averaged over tasks"
	case r.Best == "mse":
		what = "mse (a classification task does not count)"
	case r.hasKind(data.Regression):
		what += ", a regression task by its Gaussian NLL at the estimated variance, ½·log(2πe·MSE)"
	}
	return fmt.Sprintf("best/ is the epoch with the best validation %s, averaged over tasks", what)
}

// SelectionWarning is a warning, or "", about the validation split that
// chooses best/: one of fewer than MinSelectionExamples examples chooses
// by chance as much as by merit.
func (r *Run) SelectionWarning() string {
	if r.lastEpochRule() {
		return fmt.Sprintf("the validation split has %d examples, too few to choose best/ on (at least %d): best/ is the last epoch; hold out more with -valid N to choose by validation",
			r.ValidSet.Len(), MinProperExamples)
	}
	if r.ValidSet == nil || r.ValidSet.Len() >= MinSelectionExamples {
		return ""
	}
	return fmt.Sprintf("the validation split has %d examples, too few to choose best/ on (at least %d): hold out more with -valid N (or a larger valid file), or none with -valid 0 to keep the last epoch",
		r.ValidSet.Len(), MinSelectionExamples)
}

func (r *Run) hasKind(k data.Kind) bool {
	return slices.ContainsFunc(r.TrainSet.Tasks(), func(t data.Task) bool { return t.Kind == k })
}

// selection is the value of the Best metric over one epoch's validation
// lines, with the sign turned so that larger is better. A regression
// task counts by its MSE under "mse", else by its Gaussian NLL at the
// estimated variance (the MSE) less constants, −½·log(MSE): in nats like
// a classification task's NLL, and whatever the targets' units, only
// their relative improvement matters.
func (r *Run) selection(lines []MetricsLine) float64 {
	if r.Best == ProperBest {
		return r.properSelection(lines)
	}
	v, n := 0.0, 0
	for _, l := range lines {
		if l.Split != "valid" {
			continue
		}
		n++
		switch {
		case l.Regression != nil && r.Best == "mse":
			v -= l.MSE
		case l.Regression != nil:
			v -= 0.5 * math.Log(max(l.MSE, math.SmallestNonzeroFloat64))
		case r.Best == "accuracy":
			v += l.Accuracy
		case r.Best == "nll":
			v -= l.NLL
		case r.Best == "brier":
			v -= l.Brier
		case r.Best == "ece":
			v -= l.ECE
		}
	}
	return v / float64(max(1, n))
}

// improves reports whether lines beat, by the Best metric, the epoch
// best/ holds (every earlier epoch where that is unknown). Without a
// validation split every epoch does: best/ is the last.
func (r *Run) improves(lines []MetricsLine) bool {
	if r.ValidSet == nil || r.lastEpochRule() {
		return true
	}
	best := math.Inf(-1)
	switch {
	case r.bestEpoch > 0:
		best = r.selection(r.epochLines(r.bestEpoch))
	case r.bestEpoch < 0:
		for e := 1; e <= r.epoch; e++ {
			best = max(best, r.selection(r.epochLines(e)))
		}
	}
	return r.selection(lines) > best
}

// epochLines returns the history's lines of epoch e (1-based).
func (r *Run) epochLines(e int) []MetricsLine {
	var lines []MetricsLine
	for _, l := range r.history {
		if l.Epoch == e {
			lines = append(lines, l)
		}
	}
	return lines
}

// BestMetrics are the values Run.Best accepts.
var BestMetrics = []string{"accuracy", "nll", "brier", "ece", "mse", ProperBest}
