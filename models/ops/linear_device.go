package ops

import "gorgonia.org/gorgonia"

// The linear layer keeps its input (a) and output (b) when differentiated.
func (op *linearOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	l := op.dev.launcher(dt)
	y := l.out(&op.outBuf, dt, op.n, op.out)
	if y == nil {
		return l.result(op.name, y)
	}
	ny, nx := op.n*op.out, op.n*op.in
	l.gemm(false, false, op.n, op.out, op.in, ptr(vals[0]), op.in, ptr(vals[1]), op.out, 0, ptr(y), op.out)
	relu := 0
	if op.relu {
		relu = 1
	}
	l.run("bias_add", ny, ptr(y), ptr(vals[2]), op.n, op.out, 1, relu)
	if op.keep {
		l.run("copy", nx, l.scratch(&op.gpu.a, nx, l.elems()), ptr(vals[0]), nx)
		l.run("copy", ny, l.scratch(&op.gpu.b, ny, l.elems()), ptr(y), ny)
	}
	return l.result(op.name, y)
}

func (op *linearGradOutput) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	f, dt := op.fwd, vals[0].Dtype()
	n := f.n * f.out
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, f.n, f.out)
	switch {
	case out == nil:
	case f.relu:
		l.run("relu_grad", n, ptr(out), ptr(vals[0]), f.gpu.b.p, n)
	default:
		l.run("copy", n, ptr(out), ptr(vals[0]), n)
	}
	return l.result(op.name, out)
}

func (op *linearGradInput) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	f, dt := op.fwd, vals[1].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, f.xShape...)
	if out != nil {
		l.gemm(false, true, f.n, f.in, f.out, ptr(vals[1]), f.out, ptr(vals[0]), f.out, 0, ptr(out), f.in)
	}
	return l.result(op.name, out)
}

func (op *linearGradWeight) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	f, dt := op.fwd, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, f.in, f.out)
	if out != nil {
		l.gemm(true, false, f.in, f.out, f.n, f.gpu.a.p, f.in, ptr(vals[0]), f.out, 0, ptr(out), f.out)
	}
	return l.result(op.name, out)
}
