package experiment

import (
	"context"
	"fmt"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
)

// TemperaturesOrFit is TemperaturesOrFitOn the run's validation split.
func (r *Run) TemperaturesOrFit(ctx context.Context) (temps []float64, source string, err error) {
	return r.TemperaturesOrFitOn(ctx, r.ValidSet)
}

// TemperatureSourceCheckpoint is the source of temperatures a checkpoint
// recorded; fitted ones' is "fitted on " and the split's name.
const TemperatureSourceCheckpoint = "checkpoint"

// TemperaturesOrFitOn is the temperature policy of every command that
// scores or predicts with a checkpoint (eval, predict, compare's
// assessment): the temperatures the checkpoint recorded; where it
// records none (one written before they were, or edited), those fitted
// now on valid, the run's validation split (r.ValidSet, or, for a run
// restored without its data, the split loaded from them), with where
// they come from. It returns nil and no error where valid is nil or has
// fewer than MinCalibrationExamples examples (NoTemperatures says so); the
// test split is never read. TemperatureWarnings says what to warn of in
// what it returns.
func (r *Run) TemperaturesOrFitOn(ctx context.Context, valid data.Dataset) (temps []float64, source string, err error) {
	if r.temperatures != nil {
		return r.Temperatures(), TemperatureSourceCheckpoint, nil
	}
	if valid == nil || valid.Len() < MinCalibrationExamples {
		return nil, "", nil
	}
	out, labels, err := r.Trainer.Outputs(ctx, valid)
	if err != nil {
		return nil, "", fmt.Errorf("fitting temperatures: %w", err)
	}
	if temps, err = FitTemperatures(valid.Tasks(), out, labels); err != nil {
		return nil, "", fmt.Errorf("fitting temperatures on %s: %w", valid.Name(), err)
	}
	return temps, "fitted on " + valid.Name(), nil
}

// NoTemperatures says why a run has no temperatures to apply, where
// TemperaturesOrFitOn gives none: validSize is its validation split's
// examples, 0 for none.
func NoTemperatures(validSize int) string {
	if validSize == 0 {
		return "no temperature scaling: the run has no validation split to fit temperatures on"
	}
	return fmt.Sprintf("no temperature scaling: the run's validation split has %d examples, fewer than the %d a temperature is fitted on",
		validSize, MinCalibrationExamples)
}

// TemperatureWarnings are the warnings due on temperatures of tasks
// about to be applied: a classification task's at a bound of the fit's
// search (metrics.AtTemperatureBound), where the fit found no minimum
// inside it, and so probabilities all but uniform or all but one-hot.
func TemperatureWarnings(tasks []data.Task, temps []float64) []string {
	var warnings []string
	for j, t := range tasks {
		if j >= len(temps) || t.Kind != data.Classification || !metrics.AtTemperatureBound(temps[j]) {
			continue
		}
		what := "near-uniform probabilities: on the validation split the ensemble does little better than chance"
		if temps[j] < 1 {
			what = "near one-hot probabilities: the ensemble is right on (almost) every validation example, too few to fit on"
		}
		warnings = append(warnings, fmt.Sprintf("task %s: temperature %.7g is at the bound of the search [%g, %g], not a fitted minimum; it gives %s",
			t.Name, temps[j], float64(metrics.MinTemperature), float64(metrics.MaxTemperature), what))
	}
	return warnings
}

// Assessment is a checkpoint's test scores: the ensemble's as it
// predicts and after temperature scaling, and, where asked for, how well
// its uncertainty detects another data set's inputs.
type Assessment struct {
	Epoch             int            `json:"epoch"`
	Temperatures      []float64      `json:"temperatures,omitempty"`
	TemperatureSource string         `json:"temperature_source,omitempty"`
	Tasks             []AssessedTask `json:"tasks"`
	OOD               *OOD           `json:"ood,omitempty"`
}

// AssessedTask is one task's part of an Assessment.
type AssessedTask struct {
	Task string        `json:"task"`
	Raw  metrics.Score `json:"raw"`
	// Calibrated is Raw after temperature scaling; absent without
	// temperatures.
	Calibrated *metrics.Score `json:"calibrated,omitempty"`
}

// Assess scores the restored run on its test split, raw and at its
// temperatures (TemperaturesOrFit), and with ood not "" against that data
// set's test inputs (OODSplit).
func (r *Run) Assess(ctx context.Context, dataDir, ood string) (Assessment, error) {
	a := Assessment{Epoch: r.epoch}
	tasks := r.TestSet.Tasks()
	out, labels, err := r.Trainer.Outputs(ctx, r.TestSet)
	if err != nil {
		return a, err
	}
	raw, err := r.Trainer.Score(out, labels)
	if err != nil {
		return a, err
	}
	for _, s := range raw {
		a.Tasks = append(a.Tasks, AssessedTask{Task: s.Task, Raw: s.Ensemble})
	}
	if a.Temperatures, a.TemperatureSource, err = r.TemperaturesOrFit(ctx); err != nil {
		return a, err
	}
	if a.Temperatures != nil {
		cal, err := Calibrated(tasks, out, labels, a.Temperatures)
		if err != nil {
			return a, err
		}
		for j := range cal {
			a.Tasks[j].Calibrated = &cal[j]
		}
	}
	if ood == "" {
		return a, nil
	}
	set, err := r.OODSplit(ctx, ood, dataDir, -1)
	if err != nil {
		return a, err
	}
	oodOut, _, err := r.Trainer.Outputs(ctx, set)
	if err != nil {
		return a, fmt.Errorf("-ood %s: %w", ood, err)
	}
	res, err := DetectOOD(ood, tasks, out, oodOut)
	if err != nil {
		return a, fmt.Errorf("-ood %s: %w", ood, err)
	}
	a.OOD = &res
	return a, nil
}
