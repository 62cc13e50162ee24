package plan

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

// checkAssessment holds a study run's assessment to the rules of the
// history it was made from: last/ at the history's last epoch, best/ at
// an epoch of it, each with the history's tasks in its order, raw scores
// equal to the history's test line of that epoch, calibrated scores in
// their ranges with the raw accuracy (temperature scaling moves no
// prediction), temperatures within metrics' bounds, and the AUROCs,
// against the plan's out-of-distribution data set ood (none if ""), in
// [0, 1] from examples on both sides. epochs is the history's length.
func checkAssessment(a *study.Assessed, h []experiment.MetricsLine, tasks []taskKind, epochs int, ood string) error {
	if a.Last.Epoch != epochs {
		return fmt.Errorf("assessed last/ at epoch %d, the history ends at %d", a.Last.Epoch, epochs)
	}
	if err := checkAssessed(a.Last, h, tasks, ood); err != nil {
		return fmt.Errorf("assessed last/: %w", err)
	}
	switch {
	case a.Best == nil:
		return errors.New("no assessment of best/")
	case a.BestEpoch != a.Best.Epoch || a.BestEpoch < 1 || a.BestEpoch > epochs:
		return fmt.Errorf("assessed best/ at epoch %d (best_epoch %d), outside the history's 1..%d", a.Best.Epoch, a.BestEpoch, epochs)
	}
	if err := checkAssessed(*a.Best, h, tasks, ood); err != nil {
		return fmt.Errorf("assessed best/: %w", err)
	}
	return nil
}

// checkAssessed checks one checkpoint's assessment (see checkAssessment).
func checkAssessed(x experiment.Assessment, h []experiment.MetricsLine, tasks []taskKind, ood string) error {
	var lines []experiment.MetricsLine
	for _, l := range h {
		if l.Epoch == x.Epoch && l.Split == "test" {
			lines = append(lines, l)
		}
	}
	if len(x.Tasks) != len(tasks) || len(lines) != len(tasks) {
		return fmt.Errorf("%d tasks, the history has %d", len(x.Tasks), len(tasks))
	}
	if len(x.Temperatures) != 0 && len(x.Temperatures) != len(tasks) {
		return fmt.Errorf("%d temperatures for %d tasks", len(x.Temperatures), len(tasks))
	}
	for i, t := range x.Temperatures {
		if !(t >= metrics.MinTemperature && t <= metrics.MaxTemperature) {
			return fmt.Errorf("task %q: temperature %v outside [%v, %v]", tasks[i].Name, t, metrics.MinTemperature, metrics.MaxTemperature)
		}
	}
	for i, t := range x.Tasks {
		switch {
		case t.Task != tasks[i].Name:
			return fmt.Errorf("task %d is %q, the history's is %q", i+1, t.Task, tasks[i].Name)
		case !reflect.DeepEqual(t.Raw, lines[i].Score):
			return fmt.Errorf("task %q: raw scores differ from the history's test line of epoch %d", t.Task, x.Epoch)
		case t.Calibrated == nil:
			continue
		case len(x.Temperatures) == 0:
			return fmt.Errorf("task %q: calibrated scores without temperatures", t.Task)
		}
		if err := checkScore(*t.Calibrated); err != nil {
			return fmt.Errorf("task %q, calibrated: %w", t.Task, err)
		}
		if c, r := t.Calibrated.Classification, t.Raw.Classification; c != nil && r != nil && c.Accuracy != r.Accuracy {
			return fmt.Errorf("task %q: calibrated accuracy %v, raw %v: temperature scaling moves no prediction", t.Task, c.Accuracy, r.Accuracy)
		}
	}
	return checkOOD(x.OOD, tasks, ood)
}

// checkOOD checks an assessment's out-of-distribution part against the
// data set the plan's assessment uses.
func checkOOD(o *experiment.OOD, tasks []taskKind, ood string) error {
	switch {
	case ood == "" && o == nil:
		return nil
	case o == nil:
		return fmt.Errorf("no out-of-distribution scores against %s", ood)
	case o.Dataset != ood:
		return fmt.Errorf("out-of-distribution scores against %q, the plan's data set is %q", o.Dataset, ood)
	case o.InExamples < 1 || o.OutExamples < 1:
		return fmt.Errorf("out-of-distribution scores from %d and %d examples", o.InExamples, o.OutExamples)
	}
	auroc := func(what string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("%s AUROC %v outside [0, 1]", what, v)
		}
		return nil
	}
	if err := errors.Join(auroc("entropy", o.Entropy), auroc("mutual information", o.MutualInformation)); err != nil {
		return err
	}
	if len(o.Tasks) != 0 && len(o.Tasks) != len(tasks) {
		return fmt.Errorf("out-of-distribution scores for %d tasks, the history has %d", len(o.Tasks), len(tasks))
	}
	for i, t := range o.Tasks {
		if t.Task != tasks[i].Name {
			return fmt.Errorf("out-of-distribution task %d is %q, the history's is %q", i+1, t.Task, tasks[i].Name)
		}
		if err := errors.Join(auroc(t.Task+" entropy", t.Entropy), auroc(t.Task+" mutual information", t.MutualInformation)); err != nil {
			return err
		}
	}
	return nil
}
