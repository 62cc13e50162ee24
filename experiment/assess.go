package experiment

import (
	"context"
	"fmt"

	"github.com/mtsgd/mtsgd/metrics"
)

// TemperaturesOrFit returns the temperatures the checkpoint recorded, or
// where it records none (one written before they were), those fitted now
// on the run's validation split, with where they come from. It returns
// nil and no error for a run without a validation split of
// MinCalibrationExamples; the test split is never read.
func (r *Run) TemperaturesOrFit(ctx context.Context) (temps []float64, source string, err error) {
	if r.temperatures != nil {
		return r.Temperatures(), "checkpoint", nil
	}
	if r.ValidSet == nil || r.ValidSet.Len() < MinCalibrationExamples {
		return nil, "", nil
	}
	out, labels, err := r.Trainer.Outputs(ctx, r.ValidSet)
	if err != nil {
		return nil, "", fmt.Errorf("fitting temperatures: %w", err)
	}
	if temps, err = FitTemperatures(r.ValidSet.Tasks(), out, labels); err != nil {
		return nil, "", fmt.Errorf("fitting temperatures on %s: %w", r.ValidSet.Name(), err)
	}
	return temps, "fitted on " + r.ValidSet.Name(), nil
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
