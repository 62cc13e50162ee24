package ops

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// This file is each op's computation on a Device: the sequence of
// kernels (package gpu/kernels) that computes what its CPU code does, in
// the same buffers' roles. Each kernel's comment names the CPU code it
// mirrors.

// onGPU is what an op keeps in device memory between runs.
type onGPU struct {
	a, b, c devScratch
	// to, when set, is where a scalar op leaves its value on the device
	// instead of copying it to the host (LossOnDevice).
	to gpu.Ptr
}

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

func (g geometry) gpu() gpu.Geom {
	return gpu.Geom{N: g.n, C: g.c, H: g.h, W: g.w, O: g.o, K: g.k, Stride: g.stride, Pad: g.pad, OH: g.oh, OW: g.ow}
}

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

func (op *convGradMatrix) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	g, dt := op.g, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, g.o, g.n*g.positions())
	if out != nil {
		l.run("swap01", g.o*g.n*g.positions(), ptr(out), ptr(vals[0]), gpu.Ptr(0), g.n, g.o, g.positions())
	}
	return l.result(op.name, out)
}

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

// The bias gradient of a convolution keeps partial sums (a), in float64.
func (op *biasGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	rows, cols := vals[0].Shape()[0], vals[0].Shape()[1]
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, op.shape...)
	if out == nil {
		return l.result(op.name, out)
	}
	if op.byColumn {
		// (rows, cols, 1): the column sums, as channel_partial (each
		// entry its own partial) and sum_columns_to would add them.
		l.run("column_sums", cols, ptr(out), ptr(vals[0]), rows, cols)
	} else {
		// (1, rows, cols): each row's sum. A convolution's rows are few
		// (its channels) and long (batch × positions): each is cut into
		// chunks summed by threads of their own, then the chunks' sums
		// added in order, rather than one thread walking a whole row.
		chunks := rowChunks(cols)
		part := l.scratch(&op.gpu.a, rows*chunks, 8)
		l.run("channel_partial", rows*chunks, part, gpu.Ptr(0), ptr(vals[0]), gpu.Ptr(0), gpu.Ptr(0), gpu.Ptr(0), 2, rows, chunks, cols/chunks)
		l.run("sum_rows_to", rows, ptr(out), part, rows, chunks)
	}
	return l.result(op.name, out)
}

// maxRowChunk is the longest chunk of a row one thread sums in a bias
// gradient on the device.
const maxRowChunk = 1024

// rowChunks is the number of equal chunks a row of cols values is cut
// into: the fewest whose length is at most maxRowChunk and divides cols
// (cols itself, chunks of one, where no other divisor fits).
func rowChunks(cols int) int {
	for k := max(1, (cols+maxRowChunk-1)/maxRowChunk); k < cols; k++ {
		if cols%k == 0 {
			return k
		}
	}
	return max(1, cols)
}

// Batch normalisation keeps the examples' partial sums (a) and the
// statistics (b): mean, variance and 1/√(σ² + eps), c doubles each; the
// mean and variance lie where BatchStats.KeepOnDevice says if it was
// called (BatchStats.at says where).
func (op *bnOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	x, dt := vals[0], vals[0].Dtype()
	n, c, hw := op.n, op.c, op.hw
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, x.Shape()...)
	part := l.scratch(&op.gpu.a, n*c, 8)
	stats := l.scratch(&op.gpu.b, 3*c, 8)
	mean, variance, inv := stats, stats+gpu.Ptr(8*c), stats+gpu.Ptr(16*c)
	if to := op.stats.to; to != 0 {
		mean, variance = to, to+gpu.Ptr(8*c)
	}
	w := ptr(vals[3])
	l.run("channel_partial", n*c, part, ptr(x), gpu.Ptr(0), w, gpu.Ptr(0), gpu.Ptr(0), 0, n, c, hw)
	l.untyped("sum_columns", c, mean, part, n, c)
	l.run("channel_partial", n*c, part, ptr(x), gpu.Ptr(0), w, mean, gpu.Ptr(0), 1, n, c, hw)
	l.untyped("sum_columns", c, variance, part, n, c)
	l.untyped("bn_inverse", c, inv, variance, op.eps, c)
	if out != nil {
		l.run("bn_forward", n*c*hw, ptr(out), ptr(x), ptr(vals[1]), ptr(vals[2]), mean, inv, n, c, hw)
	}
	op.stats.dev, op.stats.at = op.dev, mean
	return l.result(op.name, out)
}

// The parameters' gradients keep partial sums (a): β's op makes both
// its own (Σ g) and γ's (Σ g·x̂), after its own, in one pass, and sums
// both, γ's into γ's op's output, in one more (as on the CPU, where β's
// op computes both); γ's op, which runs after it, then has nothing left
// to do.
func (op *bnGradParam) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	f, dt := op.fwd, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, op.shape...)
	nc := f.n * f.c
	mean, inv := f.stats.at, f.gpu.b.p+gpu.Ptr(16*f.c)
	var part gpu.Ptr
	switch {
	case !op.scale:
		part = l.scratch(&op.gpu.a, 2*nc, 8)
		l.run("bn_param_partials", nc, part, ptr(vals[0]), ptr(vals[1]), mean, inv, f.n, f.c, f.hw)
		if g := op.gamma; g != nil && out != nil {
			// Both sums in one launch, γ's into γ's output.
			gout := l.out(&g.out, dt, g.shape...)
			if gout != nil {
				l.run("sum_columns2_to", 2*f.c, ptr(out), ptr(gout), part, f.n, f.c)
			}
			g.summed = l.err == nil
			return l.result(op.name, out)
		}
	case op.summed:
		// β's op, which ran before, wrote out (sum_columns2_to).
		op.summed = false
		return l.result(op.name, out)
	case op.beta != nil && op.beta.gpu.a.bytes >= 16*nc:
		part = op.beta.gpu.a.p + gpu.Ptr(8*nc)
	default:
		part = l.scratch(&op.gpu.a, nc, 8)
		l.run("channel_partial", nc, part, ptr(vals[0]), ptr(vals[1]), gpu.Ptr(0), mean, inv, 3, f.n, f.c, f.hw)
	}
	if out != nil {
		l.run("sum_columns_to", f.c, ptr(out), part, f.n, f.c)
	}
	return l.result(op.name, out)
}

func (op *bnGradInput) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	f, x, dt := op.fwd, vals[0], vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, x.Shape()...)
	mean, inv := f.stats.at, f.gpu.b.p+gpu.Ptr(16*f.c)
	if out != nil {
		// x, γ, weight, g, ∂γ, ∂β as bnInputGrad reads them.
		l.run("bn_grad_input", f.n*f.c*f.hw, ptr(out), ptr(x), ptr(vals[3]), ptr(vals[1]), ptr(vals[2]),
			mean, inv, ptr(vals[4]), ptr(vals[5]), f.n, f.c, f.hw)
	}
	return l.result(op.name, out)
}

// Fetch brings the statistics of the last run from the device into Mean
// and Variance; on the CPU they are there already.
func (s *BatchStats) Fetch() error {
	if s.dev == nil {
		return nil
	}
	l := &launcher{d: s.dev}
	l.download(s.Mean, s.at)
	l.download(s.Variance, s.at+gpu.Ptr(8*len(s.Mean)))
	return l.err
}

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

func (op *avgPoolOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	s, dt := op.shape, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, s[0], s[1])
	if out != nil {
		l.run("avgpool", s[0]*s[1], ptr(out), ptr(vals[0]), s[0]*s[1], s[2]*s[3])
	}
	return l.result(op.name, out)
}

func (op *avgPoolGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	s, dt := op.shape, vals[0].Dtype()
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, s...)
	if out != nil {
		l.run("avgpool_grad", s.TotalSize(), ptr(out), ptr(vals[0]), s[0]*s[1], s[2]*s[3])
	}
	return l.result(op.name, out)
}

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

func (op *copyOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	return copyOnDevice(op.dev, &op.out, op.name, vals[0])
}

// copyOnDevice copies the device value x into b's tensor: Copy's output,
// Keep's copy.
func copyOnDevice(d *Device, b *buffer, name string, x gorgonia.Value) (*tensor.Dense, error) {
	dt, n := x.Dtype(), x.Shape().TotalSize()
	l := d.launcher(dt)
	out := l.out(b, dt, x.Shape()...)
	if out != nil {
		l.run("copy", n, ptr(out), ptr(x), n)
	}
	if _, err := l.result(name, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Keep copies the values into a buffer of its own on the device, for
// package engine to read there or to Fetch to the host.
func (op *keepOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	if op.kept.skip {
		op.kept.dev, op.kept.copy, op.kept.stale, op.kept.skipped = op.dev, nil, false, true
		if vals[0].Dtype() == tensor.Float32 {
			return gorgonia.NewF32(0), nil
		}
		return gorgonia.NewF64(0), nil
	}
	out, err := copyOnDevice(op.dev, &op.out, op.name, vals[0])
	if err != nil {
		return nil, err
	}
	op.kept.dev, op.kept.copy, op.kept.stale, op.kept.skipped = op.dev, out, true, false
	if out.Dtype() == tensor.Float32 {
		return gorgonia.NewF32(0), nil
	}
	return gorgonia.NewF64(0), nil
}

// The statistics, widened, and the inverse deviations are scratch (a).
func (op *bnRunningOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	x, dt := vals[0], vals[0].Dtype()
	n, c, hw := op.n, op.c, op.hw
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, x.Shape()...)
	stats := l.scratch(&op.gpu.a, 3*c, 8)
	mean, variance, inv := stats, stats+gpu.Ptr(8*c), stats+gpu.Ptr(16*c)
	l.run("widen", c, mean, ptr(vals[3]), c)
	l.run("widen", c, variance, ptr(vals[4]), c)
	l.untyped("bn_inverse", c, inv, variance, op.eps, c)
	if out != nil {
		l.run("bn_forward", n*c*hw, ptr(out), ptr(x), ptr(vals[1]), ptr(vals[2]), mean, inv, n, c, hw)
	}
	return l.result(op.name, out)
}
