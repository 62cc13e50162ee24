package ops

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/internal/gpu"
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

// A windowed pool reads the planes as images of one channel: im2col
// lays each k×k window's taps out as a column, swap01 makes each
// window's taps one run (kept in b), and avgpool takes each run's mean:
// the output is each plane's windows in order, as the CPU's. Its
// gradient goes back the same way: avgpool_grad spreads each window's
// over its run, swap01 turns the runs into columns (a), col2im adds them
// into the planes.
func (op *avgPoolOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	s, dt := op.shape, vals[0].Dtype()
	l := op.dev.launcher(dt)
	if op.global() {
		out := l.out(&op.out, dt, s[0], s[1])
		if out != nil {
			l.run("avgpool", s[0]*s[1], ptr(out), ptr(vals[0]), s[0]*s[1], s[2]*s[3])
		}
		return l.result(op.name, out)
	}
	g := windowGeom(op.shape, op.kh)
	windows, taps := g.N*g.OH*g.OW, g.K*g.K
	out := l.out(&op.out, dt, s[0], op.features())
	cols := l.scratch(&op.gpu.a, taps*windows, l.elems())
	runs := l.scratch(&op.gpu.b, taps*windows, l.elems())
	if out != nil {
		l.run("im2col", taps*windows, cols, ptr(vals[0]), g)
		l.run("swap01", taps*windows, runs, cols, gpu.Ptr(0), taps, windows, 1)
		l.run("avgpool", windows, ptr(out), runs, windows, taps)
	}
	return l.result(op.name, out)
}

func (op *avgPoolGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	s, dt := op.shape, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, s...)
	if op.global() {
		if out != nil {
			l.run("avgpool_grad", s.TotalSize(), ptr(out), ptr(vals[0]), s[0]*s[1], s[2]*s[3])
		}
		return l.result(op.name, out)
	}
	g := windowGeom(op.shape, op.kh)
	windows, taps := g.N*g.OH*g.OW, g.K*g.K
	runs := l.scratch(&op.gpu.b, taps*windows, l.elems())
	cols := l.scratch(&op.gpu.a, taps*windows, l.elems())
	if out != nil {
		l.run("avgpool_grad", taps*windows, runs, ptr(vals[0]), windows, taps)
		l.run("swap01", taps*windows, cols, runs, gpu.Ptr(0), windows, taps, 1)
		l.run("col2im", s.TotalSize(), ptr(out), cols, g)
	}
	return l.result(op.name, out)
}

// windowGeom is the k×k, stride-k pool of the planes of shape (batch,
// C, H, W) as a convolution's geometry over batch·C images of one
// channel.
func windowGeom(shape []int, k int) gpu.Geom {
	return gpu.Geom{N: shape[0] * shape[1], C: 1, H: shape[2], W: shape[3], O: 1, K: k, Stride: k, OH: shape[2] / k, OW: shape[3] / k}
}
