package main

import (
	"context"
	"fmt"
	"slices"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/experiment"
)

// temperatures are the temperatures predict applies to the run r of the
// checkpoint dir, settings s: none under -temperature=false or where no
// task is a classification (temperatures scale class probabilities
// only, so a regression-only run has none to apply or to speak of), else
// runTemperatures'.
func (o Options) temperatures(ctx context.Context, dir string, r *experiment.Run, s experiment.Settings, tasks []data.Task) ([]float64, error) {
	if !o.Temperature || !slices.ContainsFunc(tasks, func(t data.Task) bool { return t.Kind == data.Classification }) {
		return nil, nil
	}
	return runTemperatures(ctx, dir, r, s)
}

// runTemperatures are those to apply to the ensemble's probabilities, by
// eval's policy (experiment.Run.TemperaturesOrFitOn): the checkpoint's,
// or where it records none, those fitted on the run's validation split,
// loaded from the run's files for it; nil where the run has no
// validation split to fit on. A run whose data cannot be loaded is
// refused rather than given raw probabilities eval would not report.
func runTemperatures(ctx context.Context, dir string, r *experiment.Run, s experiment.Settings) ([]float64, error) {
	tasks := s.Files.DataTasks()
	temps := r.Temperatures()
	if temps == nil {
		validSize := s.Files.Valid
		if s.TestLimit > 0 {
			validSize = min(validSize, s.TestLimit)
		}
		if validSize < experiment.MinCalibrationExamples {
			log.Info(experiment.NoTemperatures(validSize) + ": probabilities as the ensemble gives them")
			return nil, nil
		}
		valid, err := loadValid(s)
		if err != nil {
			return nil, fmt.Errorf("%s: the checkpoint records no temperatures, and fitting them on the run's validation split (%d examples) needs the run's data: %w; give -temperature=false for the probabilities as the ensemble gives them",
				dir, validSize, err)
		}
		var source string
		if temps, source, err = r.TemperaturesOrFitOn(ctx, valid); err != nil {
			return nil, err
		}
		log.WithField("temperatures", temps).Info("the checkpoint records no temperatures: " + source)
	}
	for _, w := range experiment.TemperatureWarnings(tasks, temps) {
		log.Warn(w)
	}
	log.WithField("temperatures", temps).Info("temperature scaling")
	return temps, nil
}

// loadValid loads the validation split of the run on files that s
// records, checked to be the data the run trained on, limited as the
// run limited it.
func loadValid(s experiment.Settings) (data.Dataset, error) {
	d, _, err := experiment.LoadData(s, "")
	if err != nil {
		return nil, err
	}
	if d.Record != nil {
		if err := d.Record(&s); err != nil {
			return nil, err
		}
	}
	if d.Valid == nil {
		return nil, fmt.Errorf("%s: no validation split", s.Files.Dir)
	}
	if s.TestLimit > 0 {
		return data.Limit(d.Valid, s.TestLimit), nil
	}
	return d.Valid, nil
}
