package ops

import "gorgonia.org/gorgonia"

// The input's gradient keeps the patches' gradient (a).
func (op *convGradInput) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	g, dt := op.fwd.g, vals[1].Dtype()
	np, rows := g.n*g.positions(), g.rows()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, g.n, g.c, g.h, g.w)
	dcols := l.scratch(&op.gpu.a, rows*np, l.elems())
	l.gemm(true, false, rows, np, g.o, ptr(vals[0]), rows, ptr(vals[1]), np, 0, dcols, np)
	if out != nil {
		l.run("col2im", g.n*g.c*g.h*g.w, ptr(out), dcols, g.gpu())
	}
	return l.result(op.name, out)
}
