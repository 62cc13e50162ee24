package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"
)

func (op *reluOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	x, dt := vals[0], vals[0].Dtype()
	n := x.Shape().TotalSize()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, x.Shape()...)
	switch {
	case out == nil:
	case op.add:
		l.run("add_relu", n, ptr(out), ptr(x), ptr(vals[1]), n)
	default:
		l.run("relu", n, ptr(out), ptr(x), n)
	}
	return l.result(op.name, out)
}

func (op *reluGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	y, dt := vals[0], vals[0].Dtype()
	n := y.Shape().TotalSize()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, y.Shape()...)
	if out != nil {
		l.run("relu_grad", n, ptr(out), ptr(vals[1]), ptr(y), n)
	}
	return l.result(op.name, out)
}

// The device has the global average pool's kernels only: a windowed
// pool is refused there, naming itself.
func (op *avgPoolOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	if !op.global() {
		return nil, fmt.Errorf("ops: %v: the %d×%d average pool has no device kernel", op, op.kh, op.kw)
	}
	s, dt := op.shape, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, s[0], s[1])
	if out != nil {
		l.run("avgpool", s[0]*s[1], ptr(out), ptr(vals[0]), s[0]*s[1], s[2]*s[3])
	}
	return l.result(op.name, out)
}

func (op *avgPoolGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	if !op.global() {
		return nil, fmt.Errorf("ops: %v: the %d×%d average pool has no device kernel", op, op.kh, op.kw)
	}
	s, dt := op.shape, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, s...)
	if out != nil {
		l.run("avgpool_grad", s.TotalSize(), ptr(out), ptr(vals[0]), s[0]*s[1], s[2]*s[3])
	}
	return l.result(op.name, out)
}
