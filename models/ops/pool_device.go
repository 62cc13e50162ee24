package ops

import "gorgonia.org/gorgonia"

// Pooling keeps the argmaxes (a), int32.
func (op *poolOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	g, dt := op.g, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, g.n, g.c, g.oh, g.ow)
	argmax := l.scratch(&op.gpu.a, g.n*g.c*g.positions(), 4)
	if out == nil {
		return l.result(op.name, out)
	}
	l.run("relu_maxpool", g.n*g.c*g.positions(), ptr(out), argmax, ptr(vals[0]), g.gpu())
	return l.result(op.name, out)
}

func (op *poolGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	g, dt := op.fwd.g, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, g.n, g.c, g.h, g.w)
	if out != nil {
		l.run("maxpool_grad", g.n*g.c*g.h*g.w, ptr(out), ptr(vals[0]), op.fwd.gpu.a.p, g.gpu())
	}
	return l.result(op.name, out)
}
