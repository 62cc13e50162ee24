package ops

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

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
