package ops

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
	"github.com/mtsgd/mtsgd/internal/gpu"
)

// BatchStats are the statistics a batch normalisation used in its graph's
// last run: per channel, the weighted mean and biased variance of its
// input. They are the op's own and overwritten by the next run.
type BatchStats struct {
	Mean, Variance []float64
	// On a device the op keeps them there (mean, then variance, from
	// at), and Fetch brings them here; at is to if KeepOnDevice set it.
	dev *Device
	at  gpu.Ptr
	to  gpu.Ptr
}

// KeepOnDevice makes a batch norm on a device leave the statistics of its
// graph's next runs at dst in device memory, in float64, the mean then
// the variance (2·C values), where Fetch still finds them; with dst 0 it
// keeps them in memory of its own again. A step on a device reads every
// particle's statistics back at once with its losses.
func (s *BatchStats) KeepOnDevice(dst gpu.Ptr) { s.to = dst }

// BatchNorm adds batch normalisation in training mode of x (batch, C, H,
// W) to x's graph: per channel, (x − μ)/√(σ² + eps)·γ + β with scale gamma
// and shift beta, both (1, C, 1, 1). The statistics are weighted: example
// i counts with weight[i] (the weights summing to 1), so rows of weight
// zero, padding, take no part in them; μ = Σ_i weight[i]·mean_hw(x_i) and
// σ² the same of (x − μ)². It returns the node and the statistics every
// run fills.
//
// Its gradient is the closed form for weighted statistics: with
// a = weight[i]/(H·W), s = 1/√(σ² + eps), x̂ = (x − μ)·s and g the output's
// gradient, ∂L/∂β = Σ g, ∂L/∂γ = Σ g·x̂ and
// ∂L/∂x = s·γ·(g − a·(∂L/∂β + x̂·∂L/∂γ)).
func BatchNorm(x, gamma, beta, weight *gorgonia.Node, eps float64) (*gorgonia.Node, *BatchStats, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, nil, fmt.Errorf("batch norm of shape %v, want (batch, C, H, W)", s)
	}
	for _, p := range []*gorgonia.Node{gamma, beta} {
		if ps := p.Shape(); len(ps) != 4 || ps.TotalSize() != s[1] || ps[1] != s[1] {
			return nil, nil, fmt.Errorf("batch norm of %d channels with a parameter of shape %v, want (1, %d, 1, 1)", s[1], ps, s[1])
		}
	}
	if ws := weight.Shape(); ws.TotalSize() != s[0] {
		return nil, nil, fmt.Errorf("batch norm of a batch of %d with %v weights", s[0], ws)
	}
	op := &bnOp{
		base: newBase("BatchNorm", 4, 4, 4, weight.Dims(), 4),
		n:    s[0], c: s[1], hw: s[2] * s[3], eps: eps,
		stats: &BatchStats{Mean: make([]float64, s[1]), Variance: make([]float64, s[1])},
		scale: make([]float64, s[1]),
	}
	y, err := apply(op, x, gamma, beta, weight)
	if err != nil {
		return nil, nil, err
	}
	return y, op.stats, nil
}

// bnOp is batch normalisation in training mode.
type bnOp struct {
	base
	gpu      onGPU // on a device: see deviceDo
	n, c, hw int
	eps      float64
	stats    *BatchStats
	scale    []float64 // 1/√(σ² + eps), per channel, for the gradient
	twin     *bnOp     // the recorded op this one replays (see Record)
	out      buffer
}

func (op *bnOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

func (op *bnOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, bnOpCPU[float32], bnOpCPU[float64])
}

func (op *bnOp) replayed() (gorgonia.Value, bool) {
	if op.twin == nil {
		return nil, false
	}
	return op.twin.out.t, true
}

// bnOpCPU is bnOp's run on the CPU in T.
func bnOpCPU[T float](op *bnOp, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(x.Dtype(), false, x.Shape()...)
	bnForward(op, data[T](x), vals[1].Data().([]T), vals[2].Data().([]T), vals[3].Data().([]T), data[T](out))
	return out, nil
}

func bnForward[T float](op *bnOp, x, gamma, beta, weight, y []T) {
	shareRange(op.c, len(x), func(c0, c1 int) { bnForwardChannels(op, x, gamma, beta, weight, y, c0, c1) })
}

// bnForwardChannels is bnForward for channels c0 ≤ c < c1.
func bnForwardChannels[T float](op *bnOp, x, gamma, beta, weight, y []T, c0, c1 int) {
	for c := c0; c < c1; c++ {
		var m float64
		for i := range op.n {
			m += float64(weight[i]) * mean(x[(i*op.c+c)*op.hw:(i*op.c+c+1)*op.hw])
		}
		var v float64
		for i := range op.n {
			v += float64(weight[i]) * meanSquare(x[(i*op.c+c)*op.hw:(i*op.c+c+1)*op.hw], m)
		}
		op.stats.Mean[c], op.stats.Variance[c] = m, v
		s := 1 / math.Sqrt(v+op.eps)
		op.scale[c] = s
		// y = x·k + d with k = γs and d = β − μγs.
		k := float64(gamma[c]) * s
		d := float64(beta[c]) - m*k
		for i := range op.n {
			off := (i*op.c + c) * op.hw
			for j, xv := range x[off : off+op.hw] {
				y[off+j] = T(float64(xv)*k + d)
			}
		}
	}
}

// mean is the mean of v.
func mean[T float](v []T) float64 {
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}

// meanSquare is the mean of (v − centre)².
func meanSquare[T float](v []T, centre float64) float64 {
	var s float64
	for _, x := range v {
		d := float64(x) - centre
		s += d * d
	}
	return s / float64(len(v))
}

func (op *bnOp) DiffWRT(int) []bool { return []bool{true, true, true, false} }

// SymDiff returns the gradients with respect to x, γ and β (see
// BatchNorm); the input's uses the other two. A replay's gradients read
// the recorded op's statistics, and x's values from x's node, which a
// replay of the op before shares with its recorded op.
func (op *bnOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	x, gamma, weight := inputs[0], inputs[1], inputs[3]
	src := op
	if op.twin != nil {
		src = op.twin
	}
	pshape := gamma.Shape().Clone()
	betaOp := &bnGradParam{base: op.derive("BatchNorm∂β", 4, 4, 4), fwd: src, shape: pshape}
	gammaOp := &bnGradParam{base: op.derive("BatchNorm∂γ", 4, 4, 4, 4), fwd: src, shape: pshape, scale: true, beta: betaOp}
	betaOp.gamma = gammaOp
	dBeta, err := gorgonia.ApplyOp(betaOp, x, grad)
	if err != nil {
		return nil, err
	}
	// γ's op takes β's gradient as an input it does not read, so that it
	// runs after β's op, which sums both (on a device, into γ's output).
	dGamma, err := gorgonia.ApplyOp(gammaOp, x, grad, dBeta)
	if err != nil {
		return nil, err
	}
	dx, err := gorgonia.ApplyOp(&bnGradInput{base: op.derive("BatchNorm∂x", 4, 4, weight.Dims(), 4, 4, 4, 4), fwd: src}, x, gamma, weight, grad, dGamma, dBeta)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dGamma, dBeta, nil}, nil
}

// bnGradParam is ∂L/∂β = Σ g, or with scale ∂L/∂γ = Σ g·x̂, per channel.
// Both read the whole output gradient g (and γ's the input x), which at
// ResNet-18's sizes comes from memory; so on the CPU β's op makes both
// sums in one pass and keeps γ's in gammas, and γ's op, run after it in
// the same run (β's output is its third input), takes them from there:
// the same sums in the same order as made apart (TestBNSums4Float32,
// TestBatchNormFiniteDifferences).
type bnGradParam struct {
	base
	gpu    onGPU // on a device: see deviceDo
	fwd    *bnOp
	shape  tensor.Shape
	scale  bool
	beta   *bnGradParam // γ's op: β's, which made its sums
	gamma  *bnGradParam // β's op: γ's, whose output it writes on a device
	summed bool         // γ's op: β's wrote its output on this run
	gammas []float64    // β's op: ∂L/∂γ per channel, from its last run
	out    buffer
}

func (op *bnGradParam) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *bnGradParam) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, bnGradParamCPU[float32], bnGradParamCPU[float64])
}

// bnGradParamCPU is bnGradParam's run on the CPU in T.
func bnGradParamCPU[T float](op *bnGradParam, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(x.Dtype(), false, op.shape...)
	if op.scale {
		if len(op.beta.gammas) != op.fwd.c {
			return nil, fmt.Errorf("ops: %s ran before %s", op.name, op.beta.name)
		}
		setFloats(out, op.beta.gammas)
		return out, nil
	}
	if len(op.gammas) != op.fwd.c {
		op.gammas = make([]float64, op.fwd.c)
	}
	bnParamGrads(op, data[T](x), vals[1].Data().([]T), data[T](out))
	return out, nil
}

// bnParamGrads writes ∂L/∂β into dBeta and keeps ∂L/∂γ in op.gammas.
func bnParamGrads[T float](op *bnGradParam, x, g, dBeta []T) {
	shareRange(op.fwd.c, len(g), func(c0, c1 int) { bnParamGradChannels(op, x, g, dBeta, c0, c1) })
}

// bnParamGradChannels is bnParamGrads for channels c0 ≤ c < c1.
func bnParamGradChannels[T float](op *bnGradParam, x, g, dBeta []T, c0, c1 int) {
	f := op.fwd
	for c := c0; c < c1; c++ {
		m, s := f.stats.Mean[c], f.scale[c]
		// Four partial sums each, so that the additions do not wait on
		// each other; s is applied once, to γ's total.
		var sumG, sumGX [4]float64
		for i := range f.n {
			off := (i*f.c + c) * f.hw
			gs := g[off : off+f.hw]
			xs := x[off : off+f.hw]
			xs = xs[:len(gs)]
			if g32, ok := any(gs).([]float32); ok && len(gs)%4 == 0 {
				asm.BNSums4Float32(g32, any(xs).([]float32), m, &sumG, &sumGX)
				continue
			}
			asm.AddTo4(&sumG, gs)
			asm.CenteredDot4(&sumGX, gs, xs, m)
		}
		dBeta[c] = T((sumG[0] + sumG[1]) + (sumG[2] + sumG[3]))
		op.gammas[c] = ((sumGX[0] + sumGX[1]) + (sumGX[2] + sumGX[3])) * s
	}
}

// bnGradInput is ∂L/∂x = s·γ·(g − a·(∂L/∂β + x̂·∂L/∂γ)).
type bnGradInput struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *bnOp
	out buffer
}

func (op *bnGradInput) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

func (op *bnGradInput) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, bnGradInputCPU[float32], bnGradInputCPU[float64])
}

// bnGradInputCPU is bnGradInput's run on the CPU in T.
func bnGradInputCPU[T float](op *bnGradInput, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(x.Dtype(), false, x.Shape()...)
	bnInputGrad(op.fwd, data[T](x), floatsOf[T](vals[1:6]), data[T](out))
	return out, nil
}

// floatsOf is the values of vals, each a []T.
func floatsOf[T float](vals []gorgonia.Value) [][]T {
	out := make([][]T, len(vals))
	for i, v := range vals {
		out[i] = v.Data().([]T)
	}
	return out
}

// bnInputGrad computes dx from x and in = γ, weight, g, ∂L/∂γ, ∂L/∂β.
func bnInputGrad[T float](f *bnOp, x []T, in [][]T, dx []T) {
	shareRange(f.c, len(x), func(c0, c1 int) { bnInputGradChannels(f, x, in, dx, c0, c1) })
}

// bnInputGradChannels is bnInputGrad for channels c0 ≤ c < c1.
func bnInputGradChannels[T float](f *bnOp, x []T, in [][]T, dx []T, c0, c1 int) {
	gamma, weight, g, dGamma, dBeta := in[0], in[1], in[2], in[3], in[4]
	for c := c0; c < c1; c++ {
		m, s := f.stats.Mean[c], f.scale[c]
		k := s * float64(gamma[c])
		db, dg := float64(dBeta[c]), float64(dGamma[c])
		for i := range f.n {
			// k·(g − a·(db + (x − m)·s·dg)) = k·g + c0 + c1·x.
			a := float64(weight[i]) / float64(f.hw)
			c1 := -k * a * s * dg
			c0 := -k*a*db - c1*m
			off := (i*f.c + c) * f.hw
			gs := g[off : off+f.hw]
			xs := x[off : off+f.hw]
			out := dx[off : off+f.hw]
			if g32, ok := any(gs).([]float32); ok && len(gs)%4 == 0 {
				asm.Affine2Float32(any(out).([]float32), g32, any(xs).([]float32), k, c0, c1)
				continue
			}
			asm.Affine(out, gs, xs, k, c0, c1)
		}
	}
}

// BatchNormRunning adds batch normalisation in evaluation mode to x's
// graph: per channel, (x − mean)/√(variance + eps)·γ + β with the given
// statistics (the running ones), all of shape (1, C, 1, 1). It has no
// gradient: evaluation does not differentiate. Like BatchNorm it computes
// in float64 and rounds once, and it has a device form.
func BatchNormRunning(x, gamma, beta, mean, variance *gorgonia.Node, eps float64) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("batch norm of shape %v, want (batch, C, H, W)", s)
	}
	for _, p := range []*gorgonia.Node{gamma, beta, mean, variance} {
		if ps := p.Shape(); len(ps) != 4 || ps.TotalSize() != s[1] || ps[1] != s[1] {
			return nil, fmt.Errorf("batch norm of %d channels with a parameter of shape %v, want (1, %d, 1, 1)", s[1], ps, s[1])
		}
	}
	op := &bnRunningOp{base: newBase("BatchNormRunning", 4, 4, 4, 4, 4, 4), n: s[0], c: s[1], hw: s[2] * s[3], eps: eps}
	return apply(op, x, gamma, beta, mean, variance)
}

// bnRunningOp is batch normalisation in evaluation mode.
type bnRunningOp struct {
	base
	gpu      onGPU // on a device: see deviceDo
	n, c, hw int
	eps      float64
	out      buffer
}

func (op *bnRunningOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

func (op *bnRunningOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, bnRunningCPU[float32], bnRunningCPU[float64])
}

// bnRunningCPU is bnRunningOp's run on the CPU in T.
func bnRunningCPU[T float](op *bnRunningOp, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(x.Dtype(), false, x.Shape()...)
	bnRunning(op, data[T](x), vals[1].Data().([]T), vals[2].Data().([]T), vals[3].Data().([]T), vals[4].Data().([]T), data[T](out))
	return out, nil
}

// bnRunning is y = x·k + d per channel with k = γ/√(var + ε) and
// d = β − mean·k, as bnForward with given statistics (and the kernel
// bn_forward).
func bnRunning[T float](op *bnRunningOp, x, gamma, beta, mean, variance, y []T) {
	for c := range op.c {
		k := float64(gamma[c]) / math.Sqrt(float64(variance[c])+op.eps)
		d := float64(beta[c]) - float64(mean[c])*k
		for i := range op.n {
			off := (i*op.c + c) * op.hw
			for j, xv := range x[off : off+op.hw] {
				y[off+j] = T(float64(xv)*k + d)
			}
		}
	}
}
