package models

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/models/ops"
)

// BatchNormEpsilon is added to the variance before its square root, and
// BatchNormMomentum is the weight of a batch in the running statistics, as
// in PyTorch's nn.BatchNorm2d.
const (
	BatchNormEpsilon  = 1e-5
	BatchNormMomentum = 0.1
)

// Norm connects a trunk's batch-normalisation layers to the graph that
// runs it. In training (Running nil) each layer normalises with the
// statistics of the batch, weighting example i by Weight[i] so that
// padding rows of weight zero take no part, and appends to Batch the
// statistics that every run of the graph fills (ops.BatchStats) and its
// H·W to Spatial: the caller reads them after a run to update the running
// statistics (UpdateRunning). In evaluation each layer normalises with
// Running, the nodes of the statistics listed by TrunkStats, in that
// order. Models without batch normalisation ignore it.
type Norm struct {
	Weight  *gorgonia.Node    // training: one weight per example, summing to 1
	Running []*gorgonia.Node  // evaluation: each layer's mean, then variance
	Batch   []*ops.BatchStats // training: each layer's, after a run
	Spatial []int             // training: filled with each layer's H·W
	layer   int
}

// Training tells which statistics BatchNorm uses.
func (n *Norm) Training() bool { return n.Running == nil }

// StatParams are the running mean (zeros) and variance (ones) of a
// batch-normalisation layer with c channels, as PyTorch starts them.
func StatParams(name string, c int) []Param {
	return []Param{
		{Name: name + ".running_mean", Shape: []int{1, c, 1, 1}, Init: Constant(0)},
		{Name: name + ".running_var", Shape: []int{1, c, 1, 1}, Init: Constant(1)},
	}
}

// Constant fills values with v.
func Constant(v float64) func(*rand.Rand, []float64) {
	return func(_ *rand.Rand, dst []float64) {
		for i := range dst {
			dst[i] = v
		}
	}
}

// BatchNorm adds 2-D batch normalisation of x (batch, C, H, W) with scale
// gamma and shift beta, both (1, C, 1, 1), to x's graph:
// (x − μ)/√(σ² + ε)·γ + β per channel. In training it is ops.BatchNorm,
// with the batch's weighted statistics. In evaluation, with the running
// statistics and no gradient, it is ops.BatchNormRunning.
func BatchNorm(x, gamma, beta *gorgonia.Node, norm *Norm) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("batch norm of shape %v, want (batch, C, H, W)", s)
	}
	if norm.Training() {
		if norm.Weight == nil {
			return nil, fmt.Errorf("batch norm in training without example weights")
		}
		y, stats, err := ops.BatchNorm(x, gamma, beta, norm.Weight, BatchNormEpsilon)
		if err != nil {
			return nil, err
		}
		norm.Batch = append(norm.Batch, stats)
		norm.Spatial = append(norm.Spatial, s[2]*s[3])
		return y, nil
	}
	if 2*norm.layer+1 >= len(norm.Running) {
		return nil, fmt.Errorf("batch norm layer %d: only %d running statistics", norm.layer, len(norm.Running))
	}
	mean, variance := norm.Running[2*norm.layer], norm.Running[2*norm.layer+1]
	norm.layer++
	if ms := mean.Shape(); len(ms) != 4 || ms[1] != s[1] {
		return nil, fmt.Errorf("batch norm statistics of shape %v for %d channels", ms, s[1])
	}
	return ops.BatchNormRunning(x, gamma, beta, mean, variance, BatchNormEpsilon)
}

// Scalar returns v as a Go value of dtype dt (float32 or float64), for
// scalar nodes and constants.
func Scalar(dt tensor.Dtype, v float64) any {
	if dt == tensor.Float32 {
		return float32(v)
	}
	return v
}

// UpdateRunning moves running statistics towards a batch's, as PyTorch's
// nn.BatchNorm2d does with momentum m: running ← (1−m)·running + m·batch,
// where the variance is made unbiased with n/(n−1) for the n values per
// channel the batch had (examples × H × W). running and batch are flat
// vectors of stats (each layer's mean, then variance); counts[l] is n for
// layer l.
func UpdateRunning(running, batch []float64, stats []Param, counts []int, m float64) error {
	if len(stats) != 2*len(counts) {
		return fmt.Errorf("running statistics: %d vectors for %d layers", len(stats), len(counts))
	}
	if len(running) != Size(stats) || len(batch) != len(running) {
		return fmt.Errorf("running statistics: %d and %d values for %d", len(running), len(batch), Size(stats))
	}
	for l, n := range counts {
		c := stats[2*l].Size()
		correction := 1.0
		if n > 1 {
			correction = float64(n) / float64(n-1)
		}
		for i := range c {
			running[i] = (1-m)*running[i] + m*batch[i]
			running[c+i] = (1-m)*running[c+i] + m*correction*batch[c+i]
		}
		running, batch = running[2*c:], batch[2*c:]
	}
	return nil
}
