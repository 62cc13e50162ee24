package engine

import (
	"fmt"
	"sync/atomic"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models/ops"
)

// Inputs is a batch laid out as the graphs read it: always Config.Batch
// rows, the rows past N being padding with weight zero. One Inputs feeds
// every particle; each graph copies it into tensors of its own.
type Inputs struct {
	N       int
	cfg     *Config
	x       *tensor.Dense   // Batch × InputShape, in the graphs' dtype
	targets []*tensor.Dense // task j: Batch × its kind's target shape
	weight  *tensor.Dense   // Batch: 1/N for real rows, 0 for padding
	// taskWeight[j] weights task j's loss: 1/N_j on the N_j rows with a
	// target for the task, 0 on a row whose target is missing (NaN) and
	// on padding, so that the loss is the mean over the rows that have
	// one. Batch norm's statistics take weight, every real row.
	taskWeight []*tensor.Dense
	buf        []float64 // scratch for Load
	// version identifies the batch Load laid out last (0: none), so
	// that a graph copies each batch into its tensors once, not once per
	// particle (see binding).
	version uint64
	// gathers says where each tensor of a batch from a training set held
	// on the device comes from there (heldSet.prepare); nil for a batch
	// that the graphs copy from the host.
	gathers map[*tensor.Dense]heldGather
}

// loads numbers every Load of every Inputs: two Inputs never share a
// version.
var loads atomic.Uint64

// NewInputs allocates the tensors of one batch for cfg.
func NewInputs(cfg *Config) *Inputs {
	shape := append([]int{cfg.Batch}, cfg.Model.InputShape()...)
	in := &Inputs{
		cfg:    cfg,
		x:      tensor.New(tensor.WithShape(shape...), tensor.Of(cfg.Dtype)),
		weight: tensor.New(tensor.WithShape(cfg.Batch), tensor.Of(cfg.Dtype)),
	}
	for _, t := range cfg.Tasks {
		in.targets = append(in.targets, tensor.New(tensor.WithShape(targetShape(t, cfg.Batch)...), tensor.Of(cfg.Dtype)))
		in.taskWeight = append(in.taskWeight, tensor.New(tensor.WithShape(cfg.Batch), tensor.Of(cfg.Dtype)))
	}
	return in
}

// scratch returns n zeros, reusing the buffer.
func (in *Inputs) scratch(n int) []float64 {
	if cap(in.buf) < n {
		in.buf = make([]float64, n)
	}
	in.buf = in.buf[:n]
	clear(in.buf)
	return in.buf
}

// Load lays b out. It fails if b has more examples than the configured
// batch, or a target that is not one of its task's (a class outside its
// task's classes).
func (in *Inputs) Load(cfg *Config, b *data.Batch) error {
	in.version = 0 // a failed Load leaves a partial batch
	in.gathers = nil
	n := b.Size()
	if n > cfg.Batch || n == 0 {
		return fmt.Errorf("engine: batch of %d examples, the graphs take 1 to %d", n, cfg.Batch)
	}
	in.N = n
	size := in.x.Shape().TotalSize() / cfg.Batch
	if len(b.Inputs) != n*size {
		return fmt.Errorf("engine: %d input values for %d examples of %d", len(b.Inputs), n, size)
	}
	setFloat32s(in.x, b.Inputs)
	w := in.scratch(cfg.Batch)
	for i := range n {
		w[i] = 1 / float64(n)
	}
	setFloats(in.weight, w)
	for j, t := range cfg.Tasks {
		y := b.Targets[j][:n]
		vals := in.scratch(in.targets[j].Shape().TotalSize())
		if err := kindOf(t).encode(t, y, b.Index, vals); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		setFloats(in.targets[j], vals)
		present := 0
		for _, v := range y {
			if v == v { // not NaN: a missing target
				present++
			}
		}
		tw := in.scratch(cfg.Batch)
		for i, v := range y {
			if v == v {
				tw[i] = 1 / float64(present)
			}
		}
		setFloats(in.taskWeight[j], tw)
	}
	in.version = loads.Add(1)
	return nil
}

// setFloat32s copies src into the start of t and zeroes the rest.
func setFloat32s(t *tensor.Dense, src []float32) {
	switch d := t.Data().(type) {
	case []float32:
		clear(d[copy(d, src):])
	case []float64:
		for i, v := range src {
			d[i] = float64(v)
		}
		clear(d[len(src):])
	}
}

// inputNode adds the batch input (Batch × InputShape) to g.
func inputNode(g *gorgonia.ExprGraph, cfg *Config) *gorgonia.Node {
	shape := append([]int{cfg.Batch}, cfg.Model.InputShape()...)
	return gorgonia.NewTensor(g, cfg.Dtype, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("x"))
}

// weightNode adds the examples' weights (Batch) to g.
func weightNode(g *gorgonia.ExprGraph, cfg *Config) *gorgonia.Node {
	return gorgonia.NewVector(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch), gorgonia.WithName("weight"))
}

// taskWeightNode adds the weights of task's loss (Batch) to g.
func taskWeightNode(g *gorgonia.ExprGraph, cfg *Config, task int) *gorgonia.Node {
	return gorgonia.NewVector(g, cfg.Dtype, gorgonia.WithShape(cfg.Batch), gorgonia.WithName(fmt.Sprintf("weight%d", task)))
}

// targetNode adds task's targets to g. Names are unique per task:
// Gorgonia merges identical nodes in a graph.
func targetNode(g *gorgonia.ExprGraph, cfg *Config, task int) *gorgonia.Node {
	shape := targetShape(cfg.Tasks[task], cfg.Batch)
	return gorgonia.NewTensor(g, cfg.Dtype, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(fmt.Sprintf("target%d", task)))
}

// binding is a graph's own copy of an input. Gorgonia transposes a matrix
// operand in place while it differentiates a product, so graphs that run
// at the same time must not share input tensors any more than parameters.
type binding struct {
	node    *gorgonia.Node
	val     *tensor.Dense
	dev     *ops.Device // the graph's device; nil for the CPU
	version uint64      // the Inputs version val holds
	// batch is set for a part of the batch, which every particle's
	// graphs read alike: on a particle's lane (lanes) the lanes share
	// its device memory (ops.Device.SharedTensor), and no device kernel
	// writes an input.
	batch bool
}

// set copies src, a tensor of the Inputs of the given version (0: of
// none), into the graph's tensor unless it holds that version already,
// and binds it to the node.
func (b *binding) set(src *tensor.Dense, version uint64) error {
	if b.val == nil || version == 0 || b.version != version {
		b.version = 0
		if err := b.copy(src); err != nil {
			return err
		}
		b.version = version
	}
	return gorgonia.Let(b.node, b.val)
}

// copy copies src into the graph's tensor, allocated on the first call.
func (b *binding) copy(src *tensor.Dense) error {
	if b.dev != nil {
		if b.val == nil {
			alloc := b.dev.Tensor
			if b.batch {
				alloc = b.dev.SharedTensor
			}
			t, err := alloc(src.Dtype(), src.Shape()...)
			if err != nil {
				return err
			}
			b.val = t
		}
		return b.dev.Load(b.val, src)
	}
	if b.val == nil {
		b.val = src.Clone().(*tensor.Dense)
		return nil
	}
	switch d := src.Data().(type) {
	case []float32:
		copy(b.val.Data().([]float32), d)
	case []float64:
		copy(b.val.Data().([]float64), d)
	default:
		return fmt.Errorf("engine: input of %T", d)
	}
	return nil
}
