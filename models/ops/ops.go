// Package ops adds fused neural-network operations to Gorgonia graphs: a
// 2-D convolution with optional bias, batch normalisation in training
// mode, ReLU with max-pooling, a linear layer with optional ReLU, a copy,
// and softmax cross-entropy, each with its gradient.
//
// Why our own: Gorgonia v0.9.18 builds a convolution from im2col, a
// matrix product and transposes, each a node whose result is allocated
// afresh on every run and kept until the run ends, and its batch
// normalisation has known faults (docs/gorgonia-pitfalls.md). A
// ResNet-18 step at batch 64 needed over 20 GB that way. The ops here
// compute the same functions with one matrix product each way and keep
// their results and scratch in buffers that belong to the op and are
// reused by every run of its graph.
//
// Owning buffers has one rule: a graph's ops must not run in two
// goroutines at once. Each graph is run by one worker at a time in this
// project (package engine), so that holds. What an op keeps between
// its forward and backward runs (the im2col matrix, pooling argmaxes, a
// linear layer's input and output, the batch statistics) is private to
// it; everything else its gradient reads is an input node, so Gorgonia
// orders the runs and keeps those values alive.
//
// ShareWork lets a goroutine with nothing left to do run halves of another's
// large matrix products and of its loops over channels or images
// (worksharing.go), cut where each result is computed the same in either half,
// so who ran what never shows in a result.
//
// Record and Replay let a second graph built by the same code stand in for
// a first without running its forward pass (package engine's trunk
// graph). Keep copies a node's values out of a run; Copy and Inner are the
// small pieces package engine needs around the heads.
//
// All ops work in float32 and float64, the dtype of their inputs, with
// gonum's BLAS (blas32, blas64), which a build can switch to another
// implementation with blas32.Use and blas64.Use; on a processor with
// AVX-512, LeNet's thin float32 products run in the project's own
// assembly instead (internal/asm), its convolutions reading their inputs
// rather than patches (gemm.go, directconv.go).
//
// A convolution whose output only a pool reads runs that pool in its own
// run and makes the pool's gradient in its own gradient's layout
// (convOp's pool, convGradMatrix's pool), so that the convolution's
// output and the pool's input gradient are never written out whole; the
// values are the same to the bit.
//
// The files follow the ops: ops.go (what every op shares, the opening
// of its Do among it), conv.go (the convolution), geometry.go (its
// sizes, taps, im2col and col2im), convgrad.go, convfiltergrad.go,
// convinputgrad.go and biasgrad.go (its gradient ops), directconv.go,
// pooledgrad.go and winograd.go (its faster products), pool.go,
// relu.go, batchnorm.go, linear.go, loss.go and copy.go (the other ops),
// gemm.go (what computes a product), worksharing.go (work sharing), replay.go,
// savedpass.go and stack.go (record, replay, stacking), device.go (a
// graph on a GPU) with each op's kernels there in the file named for its
// own with _device.go (conv_device.go), products.go (counting a graph's
// arithmetic) and switches.go (the faster paths tests turn off to
// compare).
package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync/atomic"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// float is the element type of a graph's tensors.
type float interface{ ~float32 | ~float64 }

// nextID numbers op instances. Gorgonia merges two nodes whose ops hash
// alike and whose inputs are the same; an op that owns buffers and is
// referred to by its gradient ops must never be merged away.
var nextID atomic.Uint64

// base holds what every op here answers alike.
type base struct {
	name string
	id   uint64
	// dims are the numbers of dimensions of the inputs, then the output.
	dims []int
	// dev is the device the op computes on; nil for the CPU.
	dev *Device
}

func newBase(name string, dims ...int) base {
	return base{name: name, id: nextID.Add(1), dims: dims}
}

// derive is the base of one of the op's gradient ops, on its device.
func (b base) derive(name string, dims ...int) base {
	d := newBase(name, dims...)
	d.dev = b.dev
	return d
}

func (b *base) place(d *Device) { b.dev = d }

func (b base) Arity() int { return len(b.dims) - 1 }

// Type is a function of tensors (or, for 0 dimensions, scalars) of one
// element type a.
func (b base) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, len(b.dims))
	for i, d := range b.dims {
		if d == 0 {
			ts[i] = a
		} else {
			ts[i] = &gorgonia.TensorType{Dims: d, Of: a}
		}
	}
	return hm.NewFnType(ts...)
}

func (b base) ReturnsPtr() bool      { return false }
func (b base) CallsExtern() bool     { return false }
func (b base) OverwritesInput() int  { return -1 }
func (b base) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%s#%d", b.name, b.id) }
func (b base) String() string        { return b.name }

// DiffWRT and SymDiff make every op here one that Gorgonia's symbolic
// differentiation knows, differentiable with respect to none of its inputs
// unless it says otherwise (the forward ops do). Without them, the
// analysis of a second Backpropagate in a graph refuses the gradient ops
// the first one added.
func (b base) DiffWRT(n int) []bool { return make([]bool, n) }

func (b base) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, fmt.Errorf("%s has no derivative", b.name)
}

func (b base) Hashcode() uint32 {
	h := fnv.New32a()
	b.WriteHash(h)
	return h.Sum32()
}

// Every op's Do opens alike, and run is that opening, so that each Do
// holds only the op's own work, as a generic function the two precisions
// instantiate (cpuForm):
//
//   - an op that stands in for a recorded one (Replay) returns the output
//     its twin's run computed;
//   - an op placed on a device computes there (its deviceDo);
//   - any other reads its input vals[at] as a dense tensor (dense) and
//     does its work in that tensor's precision, the graph's: f32 for
//     float32, f64 for float64.
func run[O opForms](op O, vals []gorgonia.Value, at int, f32 cpuForm[O, float32], f64 cpuForm[O, float64]) (gorgonia.Value, error) {
	if out, ok := op.replayed(); ok {
		return out, nil // replaying: the recorded op's run computed it
	}
	if op.onDevice() {
		return op.deviceDo(vals)
	}
	x, err := dense(vals[at], op.String())
	if err != nil {
		return nil, err
	}
	if x.Dtype() == tensor.Float32 {
		return f32(op, x, vals)
	}
	return f64(op, x, vals)
}

// opForms is what run needs of an op: its name, whether it replays a
// recorded op or computes on a device, and its form there.
type opForms interface {
	String() string
	replayed() (gorgonia.Value, bool)
	onDevice() bool
	deviceDo(vals []gorgonia.Value) (gorgonia.Value, error)
}

// cpuForm is an op's own work on the CPU in precision T: x is its input
// that run read as a dense tensor, vals all its inputs.
type cpuForm[O any, T float] func(op O, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error)

// replayed is, for an op that replays a recorded one, that op's output;
// the ops that can replay (Replay) say so in their own replayed.
func (b base) replayed() (gorgonia.Value, bool) { return nil, false }

// onDevice reports whether the op computes on a device.
func (b base) onDevice() bool { return b.dev != nil }

// scalarOf is v as a scalar value in precision T.
func scalarOf[T float](v float64) gorgonia.Value {
	if _, ok := any(T(0)).(float32); ok {
		return gorgonia.NewF32(float32(v))
	}
	return gorgonia.NewF64(v)
}

// buffer is a tensor an op owns and returns from every run.
type buffer struct {
	t *tensor.Dense
}

// get returns the buffer, allocating it with shape and dt on first use;
// with zero set it is cleared.
func (b *buffer) get(dt tensor.Dtype, zero bool, shape ...int) *tensor.Dense {
	if b.t == nil || b.t.Dtype() != dt || !b.t.Shape().Eq(tensor.Shape(shape)) {
		b.t = tensor.New(tensor.WithShape(shape...), tensor.Of(dt))
		return b.t
	}
	if zero {
		switch d := b.t.Data().(type) {
		case []float32:
			clear(d)
		case []float64:
			clear(d)
		}
	}
	return b.t
}

// setFloats sets t's values to src, sums an op made in float64, rounded
// to t's element type.
func setFloats(t *tensor.Dense, src []float64) {
	switch d := t.Data().(type) {
	case []float32:
		for i, v := range src {
			d[i] = float32(v)
		}
	case []float64:
		copy(d, src)
	}
}

// scratch is a slice an op reuses for intermediate results.
type scratch[T float] []T

// get returns n elements of s, growing it if needed; their values are
// whatever the last use left.
func (s *scratch[T]) get(n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	return (*s)[:n]
}

// firstShape is the shape of an op's first input, for ops whose result
// has it.
func firstShape(name string, in []gorgonia.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%s: input has no shape", name)
	}
	return s.Clone(), nil
}

// state returns the *S an op keeps in s (in the dtype its runs found),
// making it on first use.
func state[S any](s *any) *S {
	if st, ok := (*s).(*S); ok {
		return st
	}
	st := new(S)
	*s = st
	return st
}

// dense returns v as a dense tensor of float32 or float64.
func dense(v gorgonia.Value, what string) (*tensor.Dense, error) {
	t, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, want a dense tensor", what, v)
	}
	if dt := t.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("%s: dtype %v, want float32 or float64", what, dt)
	}
	return t, nil
}

// data returns t's elements as []T.
func data[T float](t *tensor.Dense) []T { return t.Data().([]T) }
