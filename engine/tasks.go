package engine

import (
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
	"github.com/mtsgd/mtsgd/models/ops"
)

// A taskKind is everything the engine does differently for one kind of
// task: how wide its head is, how its targets reach the graphs, its loss,
// and how its outputs are predicted and scored. The graphs, the inputs
// and the evaluation read it from taskKinds, so that a new kind of task
// is one entry there.
type taskKind struct {
	// check refuses a task of the kind that cannot be trained; nil
	// accepts any.
	check func(t data.Task) error
	// outputs is the width of the task's head.
	outputs func(t data.Task) int
	// target is the shape of one example's target in the graphs
	// (nil: a scalar).
	target func(t data.Task) []int
	// encode writes the targets y of the batch's examples into dst, the
	// zeroed graph targets of a batch (row i: example i's target, of
	// target's shape, on the scale the network learns), or says which
	// example's target is not one of the task; index is the examples'
	// indices in their data set. A missing target (NaN) leaves its row
	// zero: its loss weight is 0 (Inputs.taskWeight).
	encode func(t data.Task, y []float32, index []int, dst []float64) error
	// loss is the weighted sum Σ_i w_i·ℓ(out_i, target_i) over the
	// batch, a scalar node: with weights 1/N on the N real examples that
	// have a target for the task and 0 on the others and on padding,
	// the batch-mean loss.
	loss func(out, target, weight *gorgonia.Node) (*gorgonia.Node, error)
	// predict turns the head's outputs of some examples (rows of
	// outputs(t) values) into what the ensemble averages and score
	// reads, into dst of the same size: in the data's units.
	predict func(t data.Task, dst, out []float64)
	// score scores predictions (predict's) against targets, one per
	// example.
	score func(t data.Task, pred, targets []float64) (metrics.Score, error)
}

// taskKinds are the kinds of task the engine trains.
var taskKinds = map[data.Kind]taskKind{
	// Classification: one logit per class, softmax cross-entropy; the
	// ensemble averages the class probabilities.
	data.Classification: {
		check: func(t data.Task) error {
			if t.Classes < 2 {
				return fmt.Errorf("task %s has %d classes", t.Name, t.Classes)
			}
			return nil
		},
		outputs: func(t data.Task) int { return t.Classes },
		target:  func(t data.Task) []int { return []int{t.Classes} }, // one-hot
		encode: func(t data.Task, y []float32, index []int, dst []float64) error {
			for i, v := range y {
				if v != v {
					continue // missing
				}
				c := int(v)
				if float32(c) != v || c < 0 || c >= t.Classes {
					return fmt.Errorf("task %s: target %v of example %d is not a class 0..%d", t.Name, v, index[i], t.Classes-1)
				}
				dst[i*t.Classes+c] = 1
			}
			return nil
		},
		loss:    ops.SoftmaxCrossEntropy,
		predict: func(t data.Task, dst, out []float64) { metrics.Softmax(dst, out, t.Classes) },
		score: func(t data.Task, pred, targets []float64) (metrics.Score, error) {
			labels := make([]int, len(targets))
			for i, y := range targets {
				labels[i] = int(y)
			}
			c, err := metrics.Classify(pred, labels, t.Classes)
			return metrics.Score{Classification: &c}, err
		},
	},
	// Regression: one output, squared error; the ensemble averages the
	// predictions.
	data.Regression: {
		outputs: func(data.Task) int { return 1 },
		target:  func(data.Task) []int { return nil },
		encode: func(t data.Task, y []float32, _ []int, dst []float64) error {
			for i, v := range y {
				if v == v { // not missing
					dst[i] = t.Standardize(float64(v))
				}
			}
			return nil
		},
		loss: ops.SquaredError,
		// The loss is on the standardised scale (data.Task.Shift); every
		// score and prediction is in the data's units.
		predict: func(t data.Task, dst, out []float64) {
			for i, v := range out {
				dst[i] = t.Unstandardize(v)
			}
		},
		score: func(_ data.Task, pred, targets []float64) (metrics.Score, error) {
			r, err := metrics.Regress(pred, targets)
			return metrics.Score{Regression: &r}, err
		},
	},
}

// kindOf returns the entry of t's kind; Config.check has refused a task
// of any other, so a miss is a programmer error.
func kindOf(t data.Task) taskKind {
	k, ok := taskKinds[t.Kind]
	if !ok {
		panic(fmt.Sprintf("engine: task %s of kind %v, which the engine does not train", t.Name, t.Kind))
	}
	return k
}

// checkTask refuses a task the engine cannot train.
func checkTask(t data.Task) error {
	k, ok := taskKinds[t.Kind]
	if !ok {
		return fmt.Errorf("task %s has kind %v, which the engine does not train", t.Name, t.Kind)
	}
	if k.check != nil {
		return k.check(t)
	}
	return nil
}

// Outputs is the width of task t's head: its classes, or one value for
// regression. The models' constructors size their heads by it; a task
// the engine cannot train is an error.
func Outputs(t data.Task) (int, error) {
	if err := checkTask(t); err != nil {
		return 0, err
	}
	return outputs(t), nil
}

// outputs is Outputs for a task Config.check has accepted.
func outputs(t data.Task) int { return kindOf(t).outputs(t) }

// targetShape is the shape of a batch's targets for task t in the graphs.
func targetShape(t data.Task, batch int) []int {
	return append([]int{batch}, kindOf(t).target(t)...)
}
