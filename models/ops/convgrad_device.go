package ops

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

func (op *convGradMatrix) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	g, dt := op.g, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, g.o, g.n*g.positions())
	if out != nil {
		l.run("swap01", g.o*g.n*g.positions(), ptr(out), ptr(vals[0]), gpu.Ptr(0), g.n, g.o, g.positions())
	}
	return l.result(op.name, out)
}
