package ops

import "gorgonia.org/gorgonia"

func (op *convGradFilters) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	g, dt := op.fwd.g, vals[0].Dtype()
	np := g.n * g.positions()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, g.o, g.c, g.k, g.k)
	if out != nil {
		l.gemm(false, true, g.o, g.rows(), np, ptr(vals[0]), np, op.fwd.gpu.a.p, np, 0, ptr(out), g.rows())
	}
	return l.result(op.name, out)
}
