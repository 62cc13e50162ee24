package ops

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// The convolution keeps the batch's patches (a) and the product (b).
func (op *convOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	g, dt := op.g, vals[0].Dtype()
	np, rows := g.n*g.positions(), g.rows()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, g.n, g.o, g.oh, g.ow)
	cols := l.scratch(&op.gpu.a, rows*np, l.elems())
	prod := l.scratch(&op.gpu.b, g.o*np, l.elems())
	l.run("im2col", rows*np, cols, ptr(vals[0]), g.gpu())
	l.gemm(false, false, g.o, np, rows, ptr(vals[1]), rows, cols, np, 0, prod, np)
	// prod is (o, batch, positions); out is (batch, o, positions), the
	// bias added on the way.
	bias := gpu.Ptr(0)
	if op.bias {
		bias = ptr(vals[2])
	}
	if out != nil {
		l.run("swap01", g.o*np, ptr(out), prod, bias, g.o, g.n, g.positions())
	}
	return l.result(op.name, out)
}
