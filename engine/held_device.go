package engine

import (
	"errors"
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
)

// A training set held in device memory (Trainer.Hold) lets a step send
// only its batch's indices: each input of the step's graphs is then taken
// from the held set by one kernel (ops.Device.Gather), where it would be
// uploaded from the host. The values are those Inputs.Load lays out, bit
// for bit: the same encoding of the targets, in the graphs' dtype, and
// the weights 1/N and 1/N_j passed to the kernel as scalars.

// HoldLimit bounds the bytes of a held training set on a device that does
// not report its free memory (the emulator, whose memory is the host's).
// On one that does (the CUDA device, gpu.MemoryReporter) a set is held if
// it takes at most half the free memory, leaving the other half to the
// ensemble and its graphs.
const HoldLimit = 2 << 30

// heldSet is a data set in device memory, every array in the graphs'
// dtype, one row per example.
type heldSet struct {
	d      data.Dataset
	dev    gpu.Device
	n      int
	inputs gpu.Ptr   // n × the input's values
	ones   gpu.Ptr   // n ones: the examples' weights before the scale 1/N
	target []gpu.Ptr // per task: n × its encoded target (targetShape)
	given  []gpu.Ptr // per task: n values, 1 where the target is given, 0 where missing
	idx    gpu.Ptr   // Config.Batch int32: a step's indices, −1 for padding
	host   []int32
	owned  []gpu.Ptr
}

// heldGather is where a batch input's rows come from in a held set, and the
// scale of its values (Inputs.bind).
type heldGather struct {
	src, idx gpu.Ptr
	scale    float64
}

// heldBytes is the device memory that holding d takes for cfg.
func heldBytes(cfg *Config, d data.Dataset) int {
	width := data.InputSize(d) + 1
	for _, t := range cfg.Tasks {
		width += tensor.Shape(kindOf(t).target(t)).TotalSize() + 1
	}
	return d.Len()*width*int(cfg.Dtype.Size()) + 4*cfg.Batch
}

// Hold uploads the training set d to the device, once, so that every
// later Step sends the device only its batch's indices; it reports
// whether it did. It holds nothing on the CPU, or where d would not fit
// (HoldLimit): steps then upload their batches. A set held before is
// freed first, whatever the outcome. Every batch that Step takes
// afterwards must be d's (its Index is what the step reads); Close frees
// the set.
func (tr *Trainer) Hold(d data.Dataset) (bool, error) {
	dev := tr.cfg.Device
	if tr.held != nil {
		// A set held before is let go whatever becomes of d: the steps
		// to come take d's batches.
		err := tr.held.free()
		tr.held = nil
		if err != nil {
			return false, err
		}
	}
	if dev == nil || d.Len() == 0 {
		return false, nil
	}
	if len(d.Tasks()) != len(tr.cfg.Tasks) || data.InputSize(d) != tensor.Shape(tr.cfg.Model.InputShape()).TotalSize() {
		return false, fmt.Errorf("engine: holding %s: %d tasks and inputs of %d values, the trainer's %d and %d",
			d.Name(), len(d.Tasks()), data.InputSize(d), len(tr.cfg.Tasks), tensor.Shape(tr.cfg.Model.InputShape()).TotalSize())
	}
	limit := HoldLimit
	if m, ok := dev.(gpu.MemoryReporter); ok {
		free, err := m.FreeMemory()
		if err != nil {
			return false, fmt.Errorf("engine: holding %s: %w", d.Name(), err)
		}
		limit = free / 2
	}
	if heldBytes(tr.cfg, d) > limit {
		return false, nil
	}
	h := &heldSet{d: d, dev: dev, n: d.Len(), host: make([]int32, tr.cfg.Batch)}
	if err := h.upload(tr.cfg); err != nil {
		return false, errors.Join(fmt.Errorf("engine: holding %s on %s: %w", d.Name(), dev.Name(), err), h.free())
	}
	tr.held = h
	return true, nil
}

// alloc allocates n values of the graphs' dtype (int32s for ints).
func (h *heldSet) alloc(n, size int) (gpu.Ptr, error) {
	p, err := h.dev.Alloc(max(n*size, 8))
	if err == nil {
		h.owned = append(h.owned, p)
	}
	return p, err
}

// upload allocates the set's arrays and copies d's examples into them,
// heldChunk examples at a time.
func (h *heldSet) upload(cfg *Config) error {
	size, in := int(cfg.Dtype.Size()), data.InputSize(h.d)
	var err error
	if h.inputs, err = h.alloc(h.n*in, size); err != nil {
		return err
	}
	if h.ones, err = h.alloc(h.n, size); err != nil {
		return err
	}
	widths := make([]int, len(cfg.Tasks))
	for j, t := range cfg.Tasks {
		widths[j] = tensor.Shape(kindOf(t).target(t)).TotalSize()
		p, err := h.alloc(h.n*widths[j], size)
		if err != nil {
			return err
		}
		g, err := h.alloc(h.n, size)
		if err != nil {
			return err
		}
		h.target, h.given = append(h.target, p), append(h.given, g)
	}
	if h.idx, err = h.alloc(cfg.Batch, 4); err != nil {
		return err
	}
	for start := 0; start < h.n; start += heldChunk {
		if err := h.uploadChunk(cfg, start, min(start+heldChunk, h.n), widths); err != nil {
			return err
		}
	}
	return nil
}

// heldChunk is the examples read and uploaded at a time by Hold.
const heldChunk = 4096

// uploadChunk copies examples [lo, hi) of the set into its arrays.
func (h *heldSet) uploadChunk(cfg *Config, lo, hi int, widths []int) error {
	n, in, size := hi-lo, data.InputSize(h.d), int(cfg.Dtype.Size())
	x := make([]float32, n*in)
	y := make([][]float32, len(widths))
	for j := range y {
		y[j] = make([]float32, n)
	}
	ex := make([]float32, len(widths))
	index := make([]int, n)
	for i := range n {
		index[i] = lo + i
		if err := h.d.Example(lo+i, x[i*in:(i+1)*in], ex); err != nil {
			return fmt.Errorf("example %d: %w", lo+i, err)
		}
		for j, v := range ex {
			y[j][i] = v
		}
	}
	up := func(dst gpu.Ptr, vals []float64) error {
		t := tensor.New(tensor.WithShape(len(vals)), tensor.Of(cfg.Dtype))
		setFloats(t, vals)
		return h.dev.Upload(dst, tensorBytes(t))
	}
	xs := make([]float64, len(x))
	for i, v := range x {
		xs[i] = float64(v)
	}
	if err := up(h.inputs+gpu.Ptr(lo*in*size), xs); err != nil {
		return err
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	if err := up(h.ones+gpu.Ptr(lo*size), ones); err != nil {
		return err
	}
	for j, t := range cfg.Tasks {
		vals := make([]float64, n*widths[j])
		if err := kindOf(t).encode(t, y[j], index, vals); err != nil {
			return err
		}
		if err := up(h.target[j]+gpu.Ptr(lo*widths[j]*size), vals); err != nil {
			return err
		}
		given := make([]float64, n)
		for i, v := range y[j] {
			if v == v { // not NaN: a missing target
				given[i] = 1
			}
		}
		if err := up(h.given[j]+gpu.Ptr(lo*size), given); err != nil {
			return err
		}
	}
	return nil
}

// tensorBytes is a host tensor's values as bytes.
func tensorBytes(t *tensor.Dense) []byte {
	switch d := t.Data().(type) {
	case []float32:
		return gpu.Bytes(d)
	case []float64:
		return gpu.Bytes(d)
	}
	panic(fmt.Sprintf("engine: tensor of %v", t.Dtype()))
}

// prepare sends the device b's indices (the step's one upload; lanes
// with work recorded run it first, gpu.Ensemble) and tells
// in, which Load has laid b out on the host, where each of its tensors
// comes from on the device (Inputs.bind).
func (h *heldSet) prepare(in *Inputs, b *data.Batch, lanes *gpu.Ensemble) error {
	for r := range h.host {
		h.host[r] = -1
	}
	for r, i := range b.Index {
		if i < 0 || i >= h.n {
			return fmt.Errorf("engine: example %d of a batch is not one of the %d of the held %s", i, h.n, h.d.Name())
		}
		h.host[r] = int32(i)
	}
	if lanes != nil {
		if err := lanes.Flush(); err != nil {
			return err
		}
	}
	if err := h.dev.Upload(h.idx, gpu.Bytes(h.host)); err != nil {
		return fmt.Errorf("engine: the batch's indices: %w", err)
	}
	in.gathers = map[*tensor.Dense]heldGather{
		in.x:      {h.inputs, h.idx, 1},
		in.weight: {h.ones, h.idx, 1 / float64(in.N)},
	}
	for j, y := range b.Targets {
		present := 0
		for _, v := range y[:in.N] {
			if v == v {
				present++
			}
		}
		scale := 0.0
		if present > 0 {
			scale = 1 / float64(present)
		}
		in.gathers[in.targets[j]] = heldGather{h.target[j], h.idx, 1}
		in.gathers[in.taskWeight[j]] = heldGather{h.given[j], h.idx, scale}
	}
	return nil
}

// free releases the set's device memory.
func (h *heldSet) free() error {
	var errs []error
	for _, p := range h.owned {
		errs = append(errs, h.dev.Free(p))
	}
	h.owned = nil
	return errors.Join(errs...)
}

// bind binds src, one of in's tensors, to the graph input b: taken from
// the held set by a kernel where the step's batch is held (prepare) and b
// has device memory for it, else as binding.set copies it.
func (in *Inputs) bind(b *binding, src *tensor.Dense) error {
	g, ok := in.gathers[src]
	if !ok || b.dev == nil || !b.batch || b.val == nil || b.val.Dtype() != src.Dtype() {
		return b.set(src, in.version)
	}
	if b.version != in.version {
		b.version = 0
		if err := b.dev.Gather(b.val, g.src, g.idx, g.scale); err != nil {
			return err
		}
		b.version = in.version
	}
	return gorgonia.Let(b.node, b.val)
}
