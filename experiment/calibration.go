package experiment

import (
	"context"
	"fmt"
	"slices"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
)

// An ensemble that averages calibrated members is under-confident, and
// one of over-fitted members over-confident; either is judged fairly only
// after temperature scaling on held-out data (metrics.FitTemperature).
// A run fits one temperature per classification task on its validation
// split at every evaluation, and its checkpoints record the temperatures
// of the epoch they hold. The test split never takes part in a fit.

// MinCalibrationExamples is the least validation examples a temperature
// is fitted on. On fewer, the maximum-likelihood temperature of an
// ensemble that happens to be right on all of them runs to the search's
// lower bound (near one-hot probabilities), which would make predict's
// probabilities worse than raw; such a run records no temperatures.
const MinCalibrationExamples = 100

// FitTemperatures fits, per task, the temperature of the ensemble's
// averaged probabilities that minimises the NLL of labels; out and labels
// are as engine.Trainer.Outputs returns them (an example without a label
// for a task takes no part in its fit). A regression task gets 1
// (nothing to scale).
func FitTemperatures(tasks []data.Task, out [][][]float64, labels [][]float64) ([]float64, error) {
	temps := make([]float64, len(tasks))
	for j, t := range tasks {
		temps[j] = 1
		if t.Kind != data.Classification {
			continue
		}
		members, ys, err := metrics.Labelled(out[j], labels[j], t.Classes)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.Name, err)
		}
		mean := make([]float64, len(members[0]))
		metrics.Mean(mean, members)
		if temps[j], err = metrics.FitTemperature(mean, intLabels(ys), t.Classes); err != nil {
			return nil, fmt.Errorf("task %s: %w", t.Name, err)
		}
	}
	return temps, nil
}

// Calibrated scores the ensemble's averaged probabilities of each
// classification task after temperature temps[j]; a regression task's
// score is its ensemble's, unscaled.
func Calibrated(tasks []data.Task, out [][][]float64, labels [][]float64, temps []float64) ([]metrics.Score, error) {
	if len(temps) != len(tasks) {
		return nil, fmt.Errorf("%d temperatures for %d tasks", len(temps), len(tasks))
	}
	scores := make([]metrics.Score, len(tasks))
	for j, t := range tasks {
		width := max(t.Classes, 1)
		members, ys, err := metrics.Labelled(out[j], labels[j], width)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.Name, err)
		}
		mean := make([]float64, len(members[0]))
		metrics.Mean(mean, members)
		if t.Kind != data.Classification {
			r, err := metrics.Regress(mean, ys)
			if err != nil {
				return nil, fmt.Errorf("task %s: %w", t.Name, err)
			}
			scores[j] = metrics.Score{Regression: &r}
			continue
		}
		metrics.Temper(mean, mean, t.Classes, temps[j])
		c, err := metrics.Classify(mean, intLabels(ys), t.Classes)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.Name, err)
		}
		scores[j] = metrics.Score{Classification: &c}
	}
	return scores, nil
}

// Temperatures are the per-task temperatures the run's last evaluation
// fitted on its validation split (those a restored checkpoint recorded);
// nil when it has none: no validation split, or a checkpoint written
// before temperatures were recorded.
func (r *Run) Temperatures() []float64 { return slices.Clone(r.temperatures) }

func intLabels(ys []float64) []int {
	out := make([]int, len(ys))
	for i, y := range ys {
		out[i] = int(y)
	}
	return out
}

// OOD is how well the ensemble's uncertainty tells another data set's
// inputs (out of distribution, the positives) from its own test split's
// (the negatives): the AUROC of the predictive entropy and of the mutual
// information (the members' disagreement), each summed over the
// classification tasks and per task.
type OOD struct {
	Dataset           string    `json:"dataset"`
	InExamples        int       `json:"in_examples"`
	OutExamples       int       `json:"out_examples"`
	Entropy           float64   `json:"auroc_entropy"`
	MutualInformation float64   `json:"auroc_mutual_information"`
	Tasks             []OODTask `json:"tasks"`
}

// OODTask is one task's part of OOD.
type OODTask struct {
	Task              string  `json:"task"`
	Entropy           float64 `json:"auroc_entropy"`
	MutualInformation float64 `json:"auroc_mutual_information"`
}

// DetectOOD scores in-distribution outputs in against out-of-distribution
// outputs out (both as engine.Trainer.Outputs returns them) by AUROC.
// Only the classification tasks take part.
func DetectOOD(dataset string, tasks []data.Task, in, out [][][]float64) (OOD, error) {
	inH, inMI, inSum := uncertainty(tasks, in)
	outH, outMI, outSum := uncertainty(tasks, out)
	if inSum[0] == nil {
		return OOD{}, fmt.Errorf("out-of-distribution detection needs a classification task")
	}
	res := OOD{Dataset: dataset, InExamples: len(inSum[0]), OutExamples: len(outSum[0])}
	var err error
	if res.Entropy, err = metrics.AUROC(inSum[0], outSum[0]); err != nil {
		return OOD{}, err
	}
	if res.MutualInformation, err = metrics.AUROC(inSum[1], outSum[1]); err != nil {
		return OOD{}, err
	}
	for j, t := range tasks {
		if inH[j] == nil {
			continue
		}
		ot := OODTask{Task: t.Name}
		if ot.Entropy, err = metrics.AUROC(inH[j], outH[j]); err != nil {
			return OOD{}, err
		}
		if ot.MutualInformation, err = metrics.AUROC(inMI[j], outMI[j]); err != nil {
			return OOD{}, err
		}
		res.Tasks = append(res.Tasks, ot)
	}
	return res, nil
}

// uncertainty is, per classification task and example, the ensemble's
// predictive entropy h[j] and mutual information mi[j]; sum[0] and
// sum[1] are their sums over those tasks (nil without one).
func uncertainty(tasks []data.Task, out [][][]float64) (h, mi [][]float64, sum [2][]float64) {
	h, mi = make([][]float64, len(tasks)), make([][]float64, len(tasks))
	for j, t := range tasks {
		if t.Kind != data.Classification {
			continue
		}
		c := t.Classes
		n := len(out[j][0]) / c
		h[j], mi[j] = make([]float64, n), make([]float64, n)
		if sum[0] == nil {
			sum = [2][]float64{make([]float64, n), make([]float64, n)}
		}
		mean := make([]float64, c)
		ps := make([][]float64, len(out[j]))
		for e := range n {
			for i := range ps {
				ps[i] = out[j][i][e*c : (e+1)*c]
			}
			d := metrics.Disagree(mean, ps)
			h[j][e], mi[j][e] = d.Predictive, d.MutualInformation
			sum[0][e] += d.Predictive
			sum[1][e] += d.MutualInformation
		}
	}
	if sum[0] == nil {
		return h, mi, [2][]float64{}
	}
	return h, mi, sum
}

// OODSplit loads the test split of another data set to score against
// this run's: it must pass CheckOOD, and have inputs of the same shape
// and the same tasks
// (names, kinds and classes), so that the run's networks can take it.
// limit as Split's.
func (r *Run) OODSplit(ctx context.Context, dataset, dataDir string, limit int) (data.Dataset, error) {
	if err := CheckOOD(r.Settings, dataset); err != nil {
		return nil, err
	}
	// The other data set's own settings (its validation split, its
	// tasks), with the run's seed: the run's would not fit it.
	s := Defaults(dataset)
	s.Seed = r.Settings.Seed
	d, _, err := LoadData(s, dataDir)
	if err != nil {
		return nil, fmt.Errorf("-ood %s: %w", dataset, err)
	}
	set := d.Test
	if !slices.Equal(set.InputShape(), r.TestSet.InputShape()) {
		return nil, fmt.Errorf("-ood %s: inputs of shape %v, the run's are %v", dataset, set.InputShape(), r.TestSet.InputShape())
	}
	if !sameTasks(set.Tasks(), r.TestSet.Tasks()) {
		return nil, fmt.Errorf("-ood %s: its tasks differ from the run's (the networks need the same tasks and classes)", dataset)
	}
	if limit < 0 {
		limit = r.Settings.TestLimit
	}
	if limit > 0 {
		set = data.Limit(set, limit)
	}
	return set, ctx.Err()
}

func sameTasks(a, b []data.Task) bool {
	return slices.EqualFunc(a, b, func(x, y data.Task) bool {
		return x.Name == y.Name && x.Kind == y.Kind && x.Classes == y.Classes
	})
}
