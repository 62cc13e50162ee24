package engine

import (
	"context"
	"fmt"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
)

// TaskScores is one task's evaluation: the ensemble's and each particle's.
type TaskScores struct {
	Task      string          `json:"task"`
	Ensemble  metrics.Score   `json:"ensemble"`
	Particles []metrics.Score `json:"particles"`
}

// Evaluate scores every particle and the ensemble on d, per task. The
// ensemble predicts the mean of the particles' predictions: their class
// probabilities, or their outputs for regression (taskKind.predict).
func (tr *Trainer) Evaluate(ctx context.Context, d data.Dataset) ([]TaskScores, error) {
	out, labels, err := tr.Outputs(ctx, d)
	if err != nil {
		return nil, err
	}
	return tr.Score(out, labels)
}

// Outputs runs every particle on all of d: out[j][i] is particle i's
// predictions for task j, one row of Outputs(task) values per example
// (class probabilities, or the regression output), and labels[j] the
// task's targets. On a device the outputs stay there until the last
// batch (outputsOnDevice).
func (tr *Trainer) Outputs(ctx context.Context, d data.Dataset) (out [][][]float64, labels [][]float64, err error) {
	if tr.cfg.Device != nil {
		return tr.outputsOnDevice(ctx, d)
	}
	k, m, n := len(tr.cfg.Tasks), len(tr.Particles), d.Len()
	out = make([][][]float64, k)
	labels = make([][]float64, k)
	for j, t := range tr.cfg.Tasks {
		out[j] = make([][]float64, m)
		for i := range out[j] {
			out[j][i] = make([]float64, n*outputs(t))
		}
		labels[j] = make([]float64, 0, n)
	}
	offset := 0
	err = tr.Predict(ctx, d, func(b *data.Batch, pred [][][]float64) error {
		for j, t := range tr.cfg.Tasks {
			w := outputs(t)
			for i := range m {
				copy(out[j][i][offset*w:(offset+b.Size())*w], pred[j][i])
			}
			for _, y := range b.Targets[j] {
				labels[j] = append(labels[j], float64(y))
			}
		}
		offset += b.Size()
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, labels, nil
}

// Score scores the particles' outputs (as Outputs returns them) and
// their ensemble, the mean of the particles' outputs, per task. An
// example whose label for a task is missing (NaN) is not scored on it.
func (tr *Trainer) Score(out [][][]float64, labels [][]float64) ([]TaskScores, error) {
	scores := make([]TaskScores, len(tr.cfg.Tasks))
	for j, t := range tr.cfg.Tasks {
		members, ys, err := metrics.Labelled(out[j], labels[j], outputs(t))
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.Name, err)
		}
		mean := make([]float64, len(members[0]))
		metrics.Mean(mean, members)
		ts := TaskScores{Task: t.Name}
		if ts.Ensemble, err = kindOf(t).score(t, mean, ys); err != nil {
			return nil, err
		}
		for i := range members {
			s, err := kindOf(t).score(t, members[i], ys)
			if err != nil {
				return nil, err
			}
			ts.Particles = append(ts.Particles, s)
		}
		scores[j] = ts
	}
	return scores, nil
}

// Predict runs every particle on d's examples in index order, a batch at
// a time, and calls f with each batch and pred[j][i], particle i's
// predictions for task j on the batch's examples: rows of Outputs(task)
// values, class probabilities for a classification task, the output for
// a regression task (what Evaluate scores and averages). The slices are
// reused once f returns; an error from f stops the run and is returned.
func (tr *Trainer) Predict(ctx context.Context, d data.Dataset, f func(b *data.Batch, pred [][][]float64) error) error {
	// The last step's directions are checked first: the prediction
	// graphs read the parameters that moved along them.
	if err := tr.settle(); err != nil {
		return err
	}
	k, m := len(tr.cfg.Tasks), len(tr.Particles)
	pred := make([][][]float64, k)
	for j, t := range tr.cfg.Tasks {
		pred[j] = make([][]float64, m)
		for i := range pred[j] {
			pred[j][i] = make([]float64, tr.cfg.Batch*outputs(t))
		}
	}
	// The particles' prediction graphs only read the inputs: they share tr.in.
	batches := data.Epoch(d, tr.cfg.Batch, false, 0, 0)
	for batches.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := batches.Batch()
		if err := tr.in.Load(tr.cfg, b); err != nil {
			return err
		}
		err := tr.parallel(m, func(w, i int) error {
			var rows *deviceRows
			if tr.res != nil {
				rows = &tr.res.rows[i]
			}
			res, err := tr.machines[w].predict(tr.Particles[i], rows, tr.in)
			if err != nil {
				return fmt.Errorf("particle %d: %w", i, err)
			}
			for j, t := range tr.cfg.Tasks {
				w := outputs(t)
				pred[j][i] = pred[j][i][:b.Size()*w] // within its capacity, a batch
				kindOf(t).predict(t, pred[j][i], res[j])
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := f(b, pred); err != nil {
			return err
		}
	}
	return batches.Err()
}
