package engine

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
	"github.com/mtsgd/mtsgd/models/ops"
)

func taskLoss(t data.Task, out, target, weight *gorgonia.Node) (*gorgonia.Node, error) {
	if t.Kind == data.Classification {
		return ops.SoftmaxCrossEntropy(out, target, weight)
	}
	return squaredError(out, target, weight)
}

func score(t data.Task, pred, targets []float64) (metrics.Score, error) {
	if t.Kind == data.Regression {
		r, err := metrics.Regress(pred, targets)
		return metrics.Score{Regression: &r}, err
	}
	labels := make([]int, len(targets))
	for i, y := range targets {
		labels[i] = int(y)
	}
	c, err := metrics.Classify(pred, labels, t.Classes)
	return metrics.Score{Classification: &c}, err
}

// squaredError is Σ_i w_i·(ŷ_i − y_i)² for predictions ŷ (batch × 1).
func squaredError(pred, y, w *gorgonia.Node) (*gorgonia.Node, error) {
	flat, err := gorgonia.Reshape(pred, tensor.Shape{pred.Shape()[0]})
	if err != nil {
		return nil, err
	}
	d, err := gorgonia.Sub(flat, y)
	if err != nil {
		return nil, err
	}
	if d, err = gorgonia.Square(d); err != nil {
		return nil, err
	}
	return weightedSum(d, w)
}

func weightedSum(v, w *gorgonia.Node) (*gorgonia.Node, error) {
	p, err := gorgonia.HadamardProd(v, w)
	if err != nil {
		return nil, err
	}
	return gorgonia.Sum(p)
}
