package models

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
// padding rows of weight zero take no part, and appends to Batch two
// places that every run of the graph fills with its batch mean and biased
// variance, each shaped (1, C, 1, 1), and its H·W to Spatial: the caller
// reads them after a run to update the running statistics
// (UpdateRunning). In evaluation each
// layer normalises with Running, the nodes of the statistics listed by
// TrunkStats, in that order. Models without batch normalisation ignore it.
type Norm struct {
	Weight  *gorgonia.Node    // training: one weight per example, summing to 1
	Running []*gorgonia.Node  // evaluation: each layer's mean, then variance
	Batch   []*gorgonia.Value // training: each layer's mean, then variance, after a run
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
// (x − μ)/√(σ² + ε)·γ + β per channel.
//
// It is built from Gorgonia's elementary ops, so that Gorgonia
// differentiates it and the statistics it uses are nodes of ours. The
// batch mean of a channel is Σ_i w_i·mean_hw(x_i); Mean reduces one axis
// at a time, since Mean over two axes at once gives wrong values in
// Gorgonia v0.9.18 (../shared/notes/gorgonia.md).
func BatchNorm(x, gamma, beta *gorgonia.Node, norm *Norm) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("batch norm of shape %v, want (batch, C, H, W)", s)
	}
	c := s[1]
	var mean, variance *gorgonia.Node
	if norm.Training() {
		var err error
		if mean, err = weightedChannelMean(x, norm.Weight); err != nil {
			return nil, err
		}
		d, err := gorgonia.BroadcastSub(x, mean, nil, []byte{0, 2, 3})
		if err != nil {
			return nil, err
		}
		sq, err := gorgonia.Square(d)
		if err != nil {
			return nil, err
		}
		if variance, err = weightedChannelMean(sq, norm.Weight); err != nil {
			return nil, err
		}
		// Read copies the values as they are computed: the tape machine
		// reuses the memory of an intermediate node after its last use,
		// so the mean and variance nodes themselves hold other numbers
		// (here, σ² + ε) by the end of a run.
		for _, n := range []*gorgonia.Node{mean, variance} {
			v := new(gorgonia.Value)
			gorgonia.Read(n, v)
			norm.Batch = append(norm.Batch, v)
		}
		norm.Spatial = append(norm.Spatial, s[2]*s[3])
	} else {
		if 2*norm.layer+1 >= len(norm.Running) {
			return nil, fmt.Errorf("batch norm layer %d: only %d running statistics", norm.layer, len(norm.Running))
		}
		mean, variance = norm.Running[2*norm.layer], norm.Running[2*norm.layer+1]
		norm.layer++
	}
	if ms := mean.Shape(); len(ms) != 4 || ms[1] != c {
		return nil, fmt.Errorf("batch norm statistics of shape %v for %d channels", ms, c)
	}
	// scale = γ/√(σ² + ε), then y = (x − μ)·scale + β.
	eps := gorgonia.NewConstant(Scalar(x.Dtype(), BatchNormEpsilon))
	v, err := gorgonia.Add(variance, eps)
	if err != nil {
		return nil, err
	}
	if v, err = gorgonia.Sqrt(v); err != nil {
		return nil, err
	}
	scale, err := gorgonia.HadamardDiv(gamma, v)
	if err != nil {
		return nil, err
	}
	d, err := gorgonia.BroadcastSub(x, mean, nil, []byte{0, 2, 3})
	if err != nil {
		return nil, err
	}
	y, err := gorgonia.BroadcastHadamardProd(d, scale, nil, []byte{0, 2, 3})
	if err != nil {
		return nil, err
	}
	return gorgonia.BroadcastAdd(y, beta, nil, []byte{0, 2, 3})
}

// weightedChannelMean is Σ_i w_i·mean_hw(x_ic) for x (batch, C, H, W) and
// w (batch), shaped (1, C, 1, 1).
func weightedChannelMean(x, w *gorgonia.Node) (*gorgonia.Node, error) {
	s := x.Shape()
	m, err := gorgonia.Reshape(x, tensor.Shape{s[0], s[1], s[2] * s[3]})
	if err != nil {
		return nil, err
	}
	if m, err = gorgonia.Mean(m, 2); err != nil { // (batch, C)
		return nil, err
	}
	row, err := gorgonia.Reshape(w, tensor.Shape{1, s[0]})
	if err != nil {
		return nil, err
	}
	if m, err = gorgonia.Mul(row, m); err != nil { // (1, C)
		return nil, err
	}
	return gorgonia.Reshape(m, tensor.Shape{1, s[1], 1, 1})
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
