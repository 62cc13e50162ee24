package experiment

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
)

// A user's table often leaves a validation split of a few dozen rows, on
// which the built-in data sets' choices break down: accuracy ties at 1
// for most epochs (the first of them wins), one task's noisy score picks
// an undertrained epoch, and a temperature fitted on a few confident
// examples makes the probabilities worse. A data set that sets
// Dataset.SmallData (the user's files) chooses and calibrates so:
//
//   - best/ by "proper" (its default Best): the mean over tasks of each
//     task's proper score (NLL; a regression task's MSE) at the epoch as a
//     fraction of its epoch-1 value. A proper score does not tie where
//     accuracy does, and as a fraction of where it started each task
//     weighs the same, whatever its scale or noise.
//   - on a validation split of fewer than MinProperExamples examples,
//     best/ is the last epoch (with a warning): the run's scores there
//     vary more between epochs than training changes them.
//   - a fitted temperature is kept only where it lowers the validation
//     NLL by more than twice the standard error of the per-example
//     difference (KeepSignificantTemperatures); else the task keeps 1.
//
// The built-in data sets' validation splits (thousands of examples)
// choose as they always have: by their Best, every fitted temperature
// kept.

// ProperBest is the Best metric that compares each task's proper score
// with its epoch-1 value.
const ProperBest = "proper"

// MinProperExamples is the least validation examples on which "proper"
// chooses an epoch; on fewer, best/ is the last epoch. With 100 examples
// the standard error of an NLL or an MSE is about a tenth of its spread
// over examples, below the few-percent changes between late epochs that
// it must tell apart only where they are larger.
const MinProperExamples = 100

// properSelection is "proper"'s value over one epoch's validation lines,
// larger better: minus the mean over tasks of score/score at epoch 1.
func (r *Run) properSelection(lines []MetricsLine) float64 {
	first := map[string]float64{}
	for _, l := range r.epochLines(1) {
		if l.Split == "valid" {
			first[l.Task] = properScore(l)
		}
	}
	v, n := 0.0, 0
	for _, l := range lines {
		if l.Split != "valid" {
			continue
		}
		base, ok := first[l.Task]
		if !ok || !(base > 0) {
			base = 1
		}
		v -= properScore(l) / base
		n++
	}
	return v / float64(max(1, n))
}

// properScore is a line's proper score: a classification task's NLL, a
// regression task's MSE.
func properScore(l MetricsLine) float64 {
	if l.Regression != nil {
		return l.MSE
	}
	return l.NLL
}

// lastEpochRule reports whether best/ is the last epoch because the
// validation split is too small for "proper" to choose.
func (r *Run) lastEpochRule() bool {
	return r.Best == ProperBest && r.ValidSet != nil && r.ValidSet.Len() < MinProperExamples
}

// KeepSignificantTemperatures sets to 1 each task's temperature that does
// not lower the NLL of the ensemble's probabilities on out and labels (as
// engine.Trainer.Outputs returns them) by more than twice the standard
// error of the per-example NLL difference: a temperature fitted on few
// examples that happens to help them by chance.
func KeepSignificantTemperatures(tasks []data.Task, out [][][]float64, labels [][]float64, temps []float64) error {
	for j, t := range tasks {
		if t.Kind != data.Classification || temps[j] == 1 {
			continue
		}
		members, ys, err := metrics.Labelled(out[j], labels[j], t.Classes)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.Name, err)
		}
		mean := make([]float64, len(members[0]))
		metrics.Mean(mean, members)
		tempered := make([]float64, len(mean))
		metrics.Temper(tempered, mean, t.Classes, temps[j])
		if !significantGain(mean, tempered, intLabels(ys), t.Classes) {
			temps[j] = 1
		}
	}
	return nil
}

// significantGain reports whether the mean per-example NLL of after is
// below before's by more than twice the standard error of the
// differences.
func significantGain(before, after []float64, labels []int, classes int) bool {
	n := len(labels)
	if n < 2 {
		return false
	}
	d := make([]float64, n)
	var sum float64
	for i, y := range labels {
		d[i] = math.Log(max(after[i*classes+y], 1e-300)) - math.Log(max(before[i*classes+y], 1e-300))
		sum += d[i]
	}
	mean := sum / float64(n)
	var sq float64
	for _, v := range d {
		sq += (v - mean) * (v - mean)
	}
	se := math.Sqrt(sq / float64(n-1) / float64(n))
	return mean > 2*se
}

// smallData reports whether the run's data set calibrates as one whose
// validation split may be small (Dataset.SmallData).
func (r *Run) smallData() bool {
	d, ok := datasets.Lookup(r.Settings.Dataset)
	return ok && d.SmallData
}

// MinNoiseExamples is the least validation examples whose MSE predict
// adds to the particles' spread as a regression task's noise: the MSE of
// n Gaussian residuals has a relative standard error of √(2/n), a
// quarter at 30.
const MinNoiseExamples = 30
