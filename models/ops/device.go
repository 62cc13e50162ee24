package ops

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// A Device places a graph on a GPU (package internal/gpu): the ops of this
// package built into the graph after OnDevice compute with the kernels of
// package gpu/kernels, in buffers of the device's memory, and their
// values never come back to the host during a run, except the losses,
// which are scalars. The model code that builds the graph is the same as
// for the CPU; the ops choose where to compute.
//
// Gorgonia adds one op of its own to a differentiated graph: where a
// node feeds several others (a residual block's input), it sums the
// gradient contributions with its Add, which calls the tensor engine of
// its operands. The tape machine from VM gives every value the Device's
// engine, whose Add is a kernel.
//
// A Device owns every buffer its ops allocate; Close frees them.
type Device struct {
	dev    gpu.Device
	owned  []gpu.Ptr
	blocks []block // the buffers of Tensors, which hold several tensors
	engine *deviceEngine
	// staging holds float32 values on their way to or from the device
	// (Set, Get), reused: a step moves every parameter and gradient. A
	// graph runs on one goroutine at a time (package doc), so one buffer
	// per graph is safe.
	staging []float32
}

var devices sync.Map // *gorgonia.ExprGraph → *Device

// OnDevice places the ops built into g from now on on dev.
func OnDevice(g *gorgonia.ExprGraph, dev gpu.Device) *Device {
	d := &Device{dev: dev}
	d.engine = &deviceEngine{d: d}
	devices.Store(g, d)
	return d
}

// deviceOf returns the Device of n's graph, nil for the CPU.
func deviceOf(n *gorgonia.Node) *Device {
	if v, ok := devices.Load(n.Graph()); ok {
		return v.(*Device)
	}
	return nil
}

// GPU returns the device the graph is placed on.
func (d *Device) GPU() gpu.Device { return d.dev }

// Close frees every buffer of the graph's ops and of Tensor, and takes
// the graph off the device: its ops must not run again.
func (d *Device) Close() error {
	var first error
	for _, p := range d.owned {
		if err := d.dev.Free(p); err != nil && first == nil {
			first = err
		}
	}
	d.owned, d.blocks = nil, nil
	devices.Range(func(g, v any) bool {
		if v == d {
			devices.Delete(g)
		}
		return true
	})
	return first
}

// block is a buffer that holds several tensors (Tensors).
type block struct {
	p     gpu.Ptr
	bytes int
}

// alloc returns bytes of device memory that Close frees.
func (d *Device) alloc(bytes int) (gpu.Ptr, error) {
	p, err := d.dev.Alloc(max(bytes, 8))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", d.dev.Name(), err)
	}
	d.owned = append(d.owned, p)
	return p, nil
}

// free releases memory from alloc before Close.
func (d *Device) free(p gpu.Ptr) error {
	if i := slices.Index(d.owned, p); i >= 0 {
		d.owned = slices.Delete(d.owned, i, i+1)
	}
	return d.dev.Free(p)
}

// Tensor returns a tensor of dtype dt and shape in the device's memory,
// its values unset, for a graph's inputs and parameters.
func (d *Device) Tensor(dt tensor.Dtype, shape ...int) (*tensor.Dense, error) {
	var b buffer
	return b.onDevice(d, dt, shape...)
}

// sharer is a device whose lanes can share an allocation
// (gpu.Lane.AllocShared).
type sharer interface {
	AllocShared(bytes int) (gpu.Ptr, error)
}

// SharedTensor is Tensor for an input that every lane of a gpu.Ensemble
// uploads alike and only reads (the batch): on a lane it lies in memory
// the lanes share, so that the ensemble uploads it once; on another
// device it is Tensor's.
func (d *Device) SharedTensor(dt tensor.Dtype, shape ...int) (*tensor.Dense, error) {
	s, ok := d.dev.(sharer)
	if !ok {
		return d.Tensor(dt, shape...)
	}
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("ops: a device tensor of %v", dt)
	}
	bytes := tensor.Shape(shape).TotalSize() * int(dt.Size())
	p, err := s.AllocShared(max(bytes, 8))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.dev.Name(), err)
	}
	d.owned = append(d.owned, p)
	return tensor.New(tensor.WithShape(shape...), tensor.Of(dt), tensor.FromMemory(uintptr(p), uintptr(bytes))), nil
}

// Tensors returns tensors of dtype dt and the shapes, their values unset,
// laid one after another in one buffer of the device's memory: a graph's
// parameters, which LoadAllFrom then fills from one vector with one
// kernel.
func (d *Device) Tensors(dt tensor.Dtype, shapes ...tensor.Shape) ([]*tensor.Dense, error) {
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("ops: a device tensor of %v", dt)
	}
	total := 0
	for _, s := range shapes {
		total += s.TotalSize() * int(dt.Size())
	}
	p, err := d.alloc(total)
	if err != nil {
		return nil, err
	}
	d.blocks = append(d.blocks, block{p: p, bytes: max(total, 8)})
	ts := make([]*tensor.Dense, len(shapes))
	at := p
	for i, s := range shapes {
		bytes := s.TotalSize() * int(dt.Size())
		ts[i] = tensor.New(tensor.WithShape(s...), tensor.Of(dt), tensor.FromMemory(uintptr(at), uintptr(bytes)))
		at += gpu.Ptr(bytes)
	}
	return ts, nil
}

// LoadAllFrom is LoadFrom for each of the device tensors ts in turn, from
// consecutive values at src: one kernel when the tensors lie one after
// another in device memory (Tensors), else one per tensor.
func (d *Device) LoadAllFrom(ts []*tensor.Dense, src gpu.Ptr) error {
	if len(ts) == 0 {
		return nil
	}
	n, next := 0, ptr(ts[0])
	for _, t := range ts {
		if t.Dtype() != ts[0].Dtype() || ptr(t) != next {
			n = -1
			break
		}
		n += t.Shape().TotalSize()
		next += gpu.Ptr(t.Shape().TotalSize() * int(t.Dtype().Size()))
	}
	if n < 0 {
		for _, t := range ts {
			if err := d.LoadFrom(t, src); err != nil {
				return err
			}
			src += gpu.Ptr(8 * t.Shape().TotalSize())
		}
		return nil
	}
	l := d.launcher(ts[0].Dtype())
	if l.dt == gpu.Float32 {
		l.run("narrow", n, ptr(ts[0]), src, n)
	} else {
		l.run("copy", n, ptr(ts[0]), src, n)
	}
	return l.err
}

// Set copies src into the device tensor t, converting to t's dtype.
func (d *Device) Set(t *tensor.Dense, src []float64) error {
	if len(src) != t.Shape().TotalSize() {
		return fmt.Errorf("ops: %d values for a tensor of %v", len(src), t.Shape())
	}
	var b []byte
	switch t.Dtype() {
	case tensor.Float32:
		f := d.stage(len(src))
		for i, v := range src {
			f[i] = float32(v)
		}
		b = gpu.Bytes(f)
	case tensor.Float64:
		b = gpu.Bytes(src)
	default:
		return fmt.Errorf("ops: a device tensor of %v", t.Dtype())
	}
	return d.dev.Upload(gpu.Ptr(t.Uintptr()), b)
}

// stage returns n elements of the staging buffer.
func (d *Device) stage(n int) []float32 {
	if cap(d.staging) < n {
		d.staging = make([]float32, n)
	}
	return d.staging[:n]
}

// ownOutput is an op that computes into a buffer of its own: the ops
// whose outputs are parameters' gradients.
type ownOutput interface{ outBuffer() *buffer }

func (op *convGradFilters) outBuffer() *buffer  { return &op.out }
func (op *biasGrad) outBuffer() *buffer         { return &op.out }
func (op *bnGradParam) outBuffer() *buffer      { return &op.out }
func (op *linearGradWeight) outBuffer() *buffer { return &op.out }

// OutputsTogether lays the values of nodes, in order, one after another
// in one buffer of the device's memory (Tensors), for the nodes whose op
// computes into a buffer of its own (the ops of parameters' gradients);
// the others keep theirs. Called before the graph's first run, it lets
// StoreAllTo copy a graph's gradients into a particle's vector with one
// kernel.
func (d *Device) OutputsTogether(nodes []*gorgonia.Node) error {
	var bufs []*buffer
	var shapes []tensor.Shape
	dt := tensor.Dtype{}
	for _, n := range nodes {
		op, ok := n.Op().(ownOutput)
		if !ok || deviceOf(n) != d || (len(bufs) > 0 && n.Dtype() != dt) {
			continue
		}
		dt = n.Dtype()
		bufs = append(bufs, op.outBuffer())
		shapes = append(shapes, n.Shape().Clone())
	}
	if len(bufs) == 0 {
		return nil
	}
	ts, err := d.Tensors(dt, shapes...)
	if err != nil {
		return err
	}
	for i, b := range bufs {
		if b.t != nil && slices.Contains(d.owned, ptr(b.t)) && !d.inBlock(ptr(b.t)) {
			if err := d.free(ptr(b.t)); err != nil {
				return err
			}
		}
		b.t = ts[i]
	}
	return nil
}

// StoreAllTo is StoreTo for each of the device values vs in turn, into
// consecutive values at dst: one kernel (two if a ≠ 1) when the values
// lie one after another in device memory (OutputsTogether), else those
// of each value.
func (d *Device) StoreAllTo(dst gpu.Ptr, vs []gorgonia.Value, a float64) error {
	if len(vs) == 0 {
		return nil
	}
	n, next := 0, ptr(vs[0])
	for _, v := range vs {
		if v.Dtype() != vs[0].Dtype() || ptr(v) != next {
			n = -1
			break
		}
		n += v.Shape().TotalSize()
		next += gpu.Ptr(v.Shape().TotalSize() * int(v.Dtype().Size()))
	}
	if n < 0 {
		for _, v := range vs {
			if err := d.StoreTo(dst, v, a); err != nil {
				return err
			}
			dst += gpu.Ptr(8 * v.Shape().TotalSize())
		}
		return nil
	}
	l := d.launcher(vs[0].Dtype())
	if l.dt == gpu.Float32 {
		l.run("widen", n, dst, ptr(vs[0]), n)
	} else {
		l.run("copy", n, dst, ptr(vs[0]), n)
	}
	if a != 1 {
		l.untyped("scale_f64", n, dst, a, n)
	}
	return l.err
}

// Load copies the host tensor src into the device tensor dst, of the
// same dtype and size.
func (d *Device) Load(dst, src *tensor.Dense) error {
	if dst.Dtype() != src.Dtype() || dst.Shape().TotalSize() != src.Shape().TotalSize() {
		return fmt.Errorf("ops: %v %v into a device tensor of %v %v", src.Shape(), src.Dtype(), dst.Shape(), dst.Dtype())
	}
	switch s := src.Data().(type) {
	case []float32:
		return d.dev.Upload(ptr(dst), gpu.Bytes(s))
	case []float64:
		return d.dev.Upload(ptr(dst), gpu.Bytes(s))
	}
	return fmt.Errorf("ops: a device tensor of %v", src.Dtype())
}

// Get copies the device value v into dst, converting to float64.
func (d *Device) Get(v gorgonia.Value, dst []float64) error {
	if len(dst) != v.Shape().TotalSize() {
		return fmt.Errorf("ops: %d values for a tensor of %v", len(dst), v.Shape())
	}
	switch v.Dtype() {
	case tensor.Float32:
		f := d.stage(len(dst))
		if err := d.dev.Download(gpu.Bytes(f), gpu.Ptr(v.Uintptr())); err != nil {
			return err
		}
		for i, x := range f {
			dst[i] = float64(x)
		}
		return nil
	case tensor.Float64:
		return d.dev.Download(gpu.Bytes(dst), gpu.Ptr(v.Uintptr()))
	}
	return fmt.Errorf("ops: a device tensor of %v", v.Dtype())
}

// LoadFrom copies the float64 values at src, in device memory, into the
// device tensor t, converting to t's dtype: a graph's parameters read from
// vectors that stay on the device.
func (d *Device) LoadFrom(t *tensor.Dense, src gpu.Ptr) error {
	n := t.Shape().TotalSize()
	l := d.launcher(t.Dtype())
	if l.dt == gpu.Float32 {
		l.run("narrow", n, ptr(t), src, n)
	} else {
		l.run("copy", n, ptr(t), src, n)
	}
	return l.err
}

// StoreTo writes a·v, for the device value v, into the float64 values at
// dst in device memory: a graph's gradients written where they stay.
func (d *Device) StoreTo(dst gpu.Ptr, v gorgonia.Value, a float64) error {
	n := v.Shape().TotalSize()
	l := d.launcher(v.Dtype())
	if l.dt == gpu.Float32 {
		l.run("widen", n, dst, ptr(v), n)
	} else {
		l.run("copy", n, dst, ptr(v), n)
	}
	if a != 1 {
		l.untyped("scale_f64", n, dst, a, n)
	}
	return l.err
}

// CopyTensor copies the device tensor src into the device tensor dst, of
// the same dtype and size.
func (d *Device) CopyTensor(dst, src *tensor.Dense) error {
	if dst.Dtype() != src.Dtype() || dst.Shape().TotalSize() != src.Shape().TotalSize() {
		return fmt.Errorf("ops: %v %v into a device tensor of %v %v", src.Shape(), src.Dtype(), dst.Shape(), dst.Dtype())
	}
	n := src.Shape().TotalSize()
	l := d.launcher(src.Dtype())
	l.run("copy", n, ptr(dst), ptr(src), n)
	return l.err
}

// Owns reports whether v's memory lies in a buffer of d: every value a
// graph on the device computes, but for its scalar losses, must.
func (d *Device) Owns(v gorgonia.Value) bool {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return false
	}
	return slices.Contains(d.owned, ptr(t)) || d.inBlock(ptr(t))
}

// inBlock reports whether p lies in a buffer of Tensors.
func (d *Device) inBlock(p gpu.Ptr) bool {
	return slices.ContainsFunc(d.blocks, func(b block) bool { return p >= b.p && p < b.p+gpu.Ptr(b.bytes) })
}

// VM compiles g, placed on d, into a tape machine whose values have d's
// engine.
// engine. Like package engine's machines it drops the finalizer Gorgonia
// gives a tape machine, which would keep the graph alive one collection
// longer.
func (d *Device) VM(g *gorgonia.ExprGraph) gorgonia.VM {
	vm := gorgonia.NewTapeMachine(g, gorgonia.WithEngine(d.engine))
	runtime.SetFinalizer(vm, nil)
	return &deviceVM{VM: vm, d: d}
}

// deviceVM starts each run with the engine's results free for reuse.
type deviceVM struct {
	gorgonia.VM
	d *Device
}

func (m *deviceVM) RunAll() error {
	m.d.engine.next = 0
	return m.VM.RunAll()
}

// deviceEngine is the tensor engine of a device graph's values. It does
// one thing, Gorgonia's Add of gradient contributions; its results are
// reused from run to run in the order the run asks for them (a run
// computes the same nodes in the same order every time).
type deviceEngine struct {
	d     *Device
	arena []*tensor.Dense
	next  int
}

var errHostAccess = errors.New("ops: device memory is not accessible from the host")

func (e *deviceEngine) AllocAccessible() bool                           { return false }
func (e *deviceEngine) Alloc(int64) (tensor.Memory, error)              { return nil, errHostAccess }
func (e *deviceEngine) Free(tensor.Memory, int64) error                 { return errHostAccess }
func (e *deviceEngine) Memset(tensor.Memory, any) error                 { return errHostAccess }
func (e *deviceEngine) Memclr(tensor.Memory)                            {}
func (e *deviceEngine) Memcpy(_, _ tensor.Memory) error                 { return errHostAccess }
func (e *deviceEngine) Accessible(tensor.Memory) (tensor.Memory, error) { return nil, errHostAccess }
func (e *deviceEngine) WorksWith(tensor.DataOrder) bool                 { return true }

// Add is a + b for two device tensors of one shape.
func (e *deviceEngine) Add(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	if !a.Shape().Eq(b.Shape()) || a.Dtype() != b.Dtype() {
		return nil, fmt.Errorf("ops: device add of %v %v and %v %v", a.Shape(), a.Dtype(), b.Shape(), b.Dtype())
	}
	o := tensor.ParseFuncOpts(opts...)
	if o.Incr() != nil {
		return nil, fmt.Errorf("ops: device add into an increment")
	}
	out, _ := o.Reuse().(*tensor.Dense)
	if out == nil {
		if e.next == len(e.arena) {
			t, err := e.d.Tensor(a.Dtype(), a.Shape()...)
			if err != nil {
				return nil, err
			}
			e.arena = append(e.arena, t)
		}
		out = e.arena[e.next]
		if !out.Shape().Eq(a.Shape()) || out.Dtype() != a.Dtype() {
			return nil, fmt.Errorf("ops: device add %d of a run changed shape, %v to %v", e.next, out.Shape(), a.Shape())
		}
		e.next++
	}
	l := e.d.launcher(a.Dtype())
	l.run("add", a.Shape().TotalSize(), ptr(out), ptr(a), ptr(b), a.Shape().TotalSize())
	return out, l.err
}

// AddScalar is not done on the device: Gorgonia sums only tensors of one
// shape when it differentiates.
func (e *deviceEngine) AddScalar(tensor.Tensor, any, bool, ...tensor.FuncOpt) (tensor.Tensor, error) {
	return nil, fmt.Errorf("ops: no scalar addition on the device")
}

var _ tensor.Adder = (*deviceEngine)(nil)

// onDevice returns the buffer, allocating it in d's memory with shape
// and dt on first use; its values are whatever the last run left.
func (b *buffer) onDevice(d *Device, dt tensor.Dtype, shape ...int) (*tensor.Dense, error) {
	if b.t != nil && b.t.Dtype() == dt && b.t.Shape().Eq(tensor.Shape(shape)) {
		return b.t, nil
	}
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("ops: a device tensor of %v", dt)
	}
	if b.t != nil {
		// A view into a buffer of several tensors (OutputsTogether) is
		// left to that buffer.
		if slices.Contains(d.owned, ptr(b.t)) && !d.inBlock(ptr(b.t)) {
			if err := d.free(ptr(b.t)); err != nil {
				return nil, err
			}
		}
		b.t = nil
	}
	bytes := tensor.Shape(shape).TotalSize() * int(dt.Size())
	p, err := d.alloc(bytes)
	if err != nil {
		return nil, err
	}
	b.t = tensor.New(tensor.WithShape(shape...), tensor.Of(dt), tensor.FromMemory(uintptr(p), uintptr(bytes)))
	return b.t, nil
}

// devScratch is device memory an op reuses for intermediate results.
type devScratch struct {
	p     gpu.Ptr
	bytes int
}

// ptr is the device address of a device value.
func ptr(v gorgonia.Value) gpu.Ptr { return gpu.Ptr(v.Uintptr()) }

// launcher runs one op's kernels on its device in one dtype, keeping the
// first error: an op's device code reads as the sequence of its kernels,
// with one check at the end.
type launcher struct {
	d   *Device
	dt  gpu.Dtype
	err error
}

func (d *Device) launcher(dt tensor.Dtype) *launcher {
	l := &launcher{d: d, dt: gpu.Float64}
	switch dt {
	case tensor.Float32:
		l.dt = gpu.Float32
	case tensor.Float64:
	default:
		l.err = fmt.Errorf("ops: device ops on %v", dt)
	}
	return l
}

// run launches the kernel name of the launcher's dtype.
func (l *launcher) run(name string, threads int, args ...any) {
	l.untyped(name+l.dt.Suffix(), threads, args...)
}

// untyped launches a kernel that has one version for both dtypes.
func (l *launcher) untyped(name string, threads int, args ...any) {
	if l.err == nil {
		l.err = l.d.dev.Launch(name, threads, args...)
	}
}

// gemm is C = op(A)·op(B) + beta·C on the device, row-major.
func (l *launcher) gemm(tA, tB bool, m, n, k int, a gpu.Ptr, lda int, b gpu.Ptr, ldb int, beta float64, c gpu.Ptr, ldc int) {
	if l.err == nil {
		l.err = l.d.dev.Gemm(l.dt, tA, tB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
	}
}

// out returns the op's output buffer on the device.
func (l *launcher) out(b *buffer, dt tensor.Dtype, shape ...int) *tensor.Dense {
	if l.err != nil {
		return nil
	}
	t, err := b.onDevice(l.d, dt, shape...)
	l.err = err
	return t
}

// scratch returns n elements of size bytes each from s, allocated on
// first use.
func (l *launcher) scratch(s *devScratch, n, size int) gpu.Ptr {
	if l.err != nil {
		return 0
	}
	if s.bytes < n*size {
		if s.p != 0 {
			if l.err = l.d.free(s.p); l.err != nil {
				return 0
			}
		}
		s.p, l.err = l.d.alloc(n * size)
		s.bytes = n * size
	}
	return s.p
}

// elems is the launcher's element size, for scratch.
func (l *launcher) elems() int { return l.dt.Size() }

// download copies the doubles at p into dst, waiting for the kernels
// before.
func (l *launcher) download(dst []float64, p gpu.Ptr) {
	if l.err == nil {
		l.err = l.d.dev.Download(gpu.Bytes(dst), p)
	}
}

// result returns v, or the launcher's error with the op's name.
func (l *launcher) result(name string, v gorgonia.Value) (gorgonia.Value, error) {
	if l.err != nil {
		return nil, fmt.Errorf("%s on %s: %w", name, l.d.dev.Name(), l.err)
	}
	return v, nil
}

// Each op's computation on a Device, in the file beside its CPU code
// named for it with _device.go (conv_device.go beside conv.go), is the
// sequence of kernels (package gpu/kernels) that computes what its CPU
// code does, in the same buffers' roles. Each kernel's comment names the
// CPU code it mirrors.

// onGPU is what an op keeps in device memory between runs.
type onGPU struct {
	a, b, c devScratch
	// to, when set, is where a scalar op leaves its value on the device
	// instead of copying it to the host (LossOnDevice).
	to gpu.Ptr
}

func (g geometry) gpu() gpu.Geom {
	return gpu.Geom{N: g.n, C: g.c, H: g.h, W: g.w, O: g.o, K: g.k, Stride: g.stride, Pad: g.pad, OH: g.oh, OW: g.ow}
}
