package ops

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// LossOnDevice makes loss, the node of a device op whose value is a
// scalar (SoftmaxCrossEntropy, SquaredError, Inner), leave that value on
// the device as a float64 at dst from its graph's next run on, and copy
// nothing to the host: the node's value is then NaN. With dst 0 the op
// copies its value to the host again. A step on a device reads every
// particle's losses back at once, after all its graphs' runs, rather than
// waiting for the device at each loss.
func LossOnDevice(loss *gorgonia.Node, dst gpu.Ptr) error {
	var g *onGPU
	switch op := loss.Op().(type) {
	case *xentOp:
		g = &op.gpu
	case *sqErrOp:
		g = &op.gpu
	case *innerOp:
		g = &op.gpu
	default:
		return fmt.Errorf("ops: %v is not a device loss", loss.Op())
	}
	if deviceOf(loss) == nil {
		return fmt.Errorf("ops: %v is not on a device", loss.Op())
	}
	g.to = dst
	return nil
}

// scalar is the device loss total (float64 at p) as the graph's scalar of
// dtype dt: the one value that leaves the device during a run, unless
// the op leaves it there (g.to, LossOnDevice), when it is NaN.
func (l *launcher) scalar(dt tensor.Dtype, p gpu.Ptr, g *onGPU) gorgonia.Value {
	v := []float64{math.NaN()}
	if g.to == 0 {
		l.download(v, p)
	}
	if dt == tensor.Float32 {
		return gorgonia.NewF32(float32(v[0]))
	}
	return gorgonia.NewF64(v[0])
}

// total is where a scalar op sums its value: its own scratch s, or g.to.
func (l *launcher) total(s *devScratch, g *onGPU) gpu.Ptr {
	if g.to != 0 {
		return g.to
	}
	return l.scratch(s, 1, 8)
}

// Cross-entropy keeps the softmax (a), the rows' losses (b) and their
// total (c).
func (op *xentOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	l := op.dev.launcher(dt)
	sm := l.scratch(&op.gpu.a, op.n*op.c, l.elems())
	rows, total := l.scratch(&op.gpu.b, op.n, 8), l.total(&op.gpu.c, &op.gpu)
	l.run("xent_rows", op.n, sm, rows, ptr(vals[0]), ptr(vals[1]), ptr(vals[2]), op.n, op.c)
	l.untyped("sum_columns", 1, total, rows, op.n, 1)
	return l.result(op.name, l.scalar(dt, total, &op.gpu))
}

func (op *xentGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	f, dt := op.fwd, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, f.n, f.c)
	if out != nil {
		l.run("xent_grad", f.n*f.c, ptr(out), f.gpu.a.p, ptr(vals[0]), ptr(vals[1]), upstream(vals[2]), f.n, f.c)
	}
	return l.result(op.name, out)
}

// The squared error keeps the rows' losses (a) and their total (b).
func (op *sqErrOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	l := op.dev.launcher(dt)
	rows, total := l.scratch(&op.gpu.a, op.n, 8), l.total(&op.gpu.b, &op.gpu)
	l.run("sqerr_rows", op.n, rows, ptr(vals[0]), ptr(vals[1]), ptr(vals[2]), op.n)
	l.untyped("sum_columns", 1, total, rows, op.n, 1)
	return l.result(op.name, l.scalar(dt, total, &op.gpu))
}

func (op *sqErrGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, op.shape...)
	if out != nil {
		l.run("sqerr_grad", op.n, ptr(out), ptr(vals[0]), ptr(vals[1]), ptr(vals[2]), upstream(vals[3]), op.n)
	}
	return l.result(op.name, out)
}

// The inner product keeps its value (a) and that value widened (b).
func (op *innerOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	n := op.shape.TotalSize()
	l := op.dev.launcher(dt)
	dot, wide := l.scratch(&op.gpu.a, 1, l.elems()), l.total(&op.gpu.b, &op.gpu)
	l.gemm(false, true, 1, 1, n, ptr(vals[0]), n, ptr(vals[1]), n, 0, dot, 1)
	l.run("widen", 1, wide, dot, 1)
	return l.result(op.name, l.scalar(dt, wide, &op.gpu))
}

func (op *scaleOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	n := op.shape.TotalSize()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, op.shape...)
	if out != nil {
		l.run("copy", n, ptr(out), ptr(vals[0]), n)
		l.run("scale", n, ptr(out), upstream(vals[1]), n)
	}
	return l.result(op.name, out)
}
