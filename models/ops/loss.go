package ops

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SoftmaxCrossEntropy adds the weighted cross-entropy of softmax(z) to
// the targets y to z's graph: Σ_i w_i·(log Σ_c exp z_ic − Σ_c y_ic·z_ic)
// for logits z and targets y (batch × C; one-hot rows for class labels)
// and weights w (batch). The result is a scalar. The row maximum is
// subtracted inside the log-sum-exp, so large logits do not overflow.
//
// Its gradient with respect to z is w_i·(softmax(z_i)·Σ_c y_ic − y_i),
// times the upstream gradient; targets and weights get none.
func SoftmaxCrossEntropy(z, y, w *gorgonia.Node) (*gorgonia.Node, error) {
	zs := z.Shape()
	if len(zs) != 2 || !y.Shape().Eq(zs) || w.Shape().TotalSize() != zs[0] {
		return nil, fmt.Errorf("cross-entropy of logits %v, targets %v, weights %v: want (batch, C), (batch, C), (batch)", zs, y.Shape(), w.Shape())
	}
	op := &xentOp{base: newBase("SoftmaxCrossEntropy", 2, 2, w.Dims(), 0), n: zs[0], c: zs[1]}
	return apply(op, z, y, w)
}

// xentOp is the loss; it keeps the softmax for the gradient.
type xentOp struct {
	base
	gpu     onGPU // on a device: see deviceDo
	n, c    int
	softmax any // []T
}

func (op *xentOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *xentOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, xentCPU[float32], xentCPU[float64])
}

// xentCPU is xentOp's run on the CPU in T.
func xentCPU[T float](op *xentOp, z *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	sm := softmaxOf[T](&op.softmax, op.n*op.c)
	return scalarOf[T](xentForward(op.n, op.c, data[T](z), vals[1].Data().([]T), vals[2].Data().([]T), sm)), nil
}

func softmaxOf[T float](s *any, n int) []T {
	if v, ok := (*s).([]T); ok && len(v) == n {
		return v
	}
	v := make([]T, n)
	*s = v
	return v
}

// xentForward returns the loss and writes each row's softmax into sm.
func xentForward[T float](n, c int, z, y, w, sm []T) float64 {
	var loss float64
	for i := range n {
		row, p := z[i*c:(i+1)*c], sm[i*c:(i+1)*c]
		m := float64(row[0])
		for _, v := range row[1:] {
			m = max(m, float64(v))
		}
		var sum float64
		for k, v := range row {
			e := math.Exp(float64(v) - m)
			p[k] = T(e)
			sum += e
		}
		lse := m + math.Log(sum)
		var picked float64
		for k, v := range row {
			p[k] = T(float64(p[k]) / sum)
			picked += float64(y[i*c+k]) * float64(v)
		}
		var mass float64
		for _, t := range y[i*c : (i+1)*c] {
			mass += float64(t)
		}
		loss += float64(w[i]) * (lse*mass - picked)
	}
	return loss
}

func (op *xentOp) DiffWRT(int) []bool { return []bool{true, false, false} }

func (op *xentOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dz, err := gorgonia.ApplyOp(&xentGrad{base: op.derive(op.name+"∂z", 2, inputs[2].Dims(), 0, 2), fwd: op}, inputs[1], inputs[2], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dz, nil, nil}, nil
}

// xentGrad is ∂L/∂z from the kept softmax.
type xentGrad struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *xentOp
	out buffer
}

func (op *xentGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.fwd.n, op.fwd.c}, nil
}

func (op *xentGrad) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, xentGradCPU[float32], xentGradCPU[float64])
}

// xentGradCPU is xentGrad's run on the CPU in T.
func xentGradCPU[T float](op *xentGrad, y *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	f := op.fwd
	out := op.out.get(y.Dtype(), false, f.n, f.c)
	xentBackward(f.n, f.c, f.softmax.([]T), data[T](y), vals[1].Data().([]T), float64(vals[2].Data().(T)), data[T](out))
	return out, nil
}

func xentBackward[T float](n, c int, sm, y, w []T, upstream float64, dz []T) {
	for i := range n {
		var mass float64
		for _, t := range y[i*c : (i+1)*c] {
			mass += float64(t)
		}
		k := upstream * float64(w[i])
		for j := range c {
			dz[i*c+j] = T(k * (float64(sm[i*c+j])*mass - float64(y[i*c+j])))
		}
	}
}

// SquaredError adds the weighted squared error Σ_i w_i·(p_i − y_i)² of
// the predictions p (batch × 1) against the targets y (batch) with
// weights w (batch) to p's graph, a scalar, summed in float64. Its
// gradient with respect to p is 2·w_i·(p_i − y_i) times the upstream
// gradient; targets and weights get none.
func SquaredError(p, y, w *gorgonia.Node) (*gorgonia.Node, error) {
	ps := p.Shape()
	n := ps.TotalSize()
	if len(ps) != 2 || ps[1] != 1 || y.Shape().TotalSize() != n || w.Shape().TotalSize() != n {
		return nil, fmt.Errorf("squared error of predictions %v, targets %v, weights %v: want (batch, 1), (batch), (batch)", ps, y.Shape(), w.Shape())
	}
	return apply(&sqErrOp{base: newBase("SquaredError", 2, y.Dims(), w.Dims(), 0), n: n}, p, y, w)
}

type sqErrOp struct {
	base
	gpu onGPU // on a device: see deviceDo
	n   int
}

func (op *sqErrOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *sqErrOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, sqErrCPU[float32], sqErrCPU[float64])
}

// sqErrCPU is sqErrOp's run on the CPU in T.
func sqErrCPU[T float](_ *sqErrOp, p *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	return scalarOf[T](sqErr(data[T](p), vals[1].Data().([]T), vals[2].Data().([]T))), nil
}

func sqErr[T float](p, y, w []T) float64 {
	var s float64
	for i, v := range p {
		d := float64(v) - float64(y[i])
		s += float64(w[i]) * d * d
	}
	return s
}

func (op *sqErrOp) DiffWRT(int) []bool { return []bool{true, false, false} }

func (op *sqErrOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dp, err := gorgonia.ApplyOp(&sqErrGrad{base: op.derive(op.name+"∂p", 2, inputs[1].Dims(), inputs[2].Dims(), 0, 2), n: op.n, shape: inputs[0].Shape().Clone()}, inputs[0], inputs[1], inputs[2], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dp, nil, nil}, nil
}

// sqErrGrad is ∂L/∂p.
type sqErrGrad struct {
	base
	gpu   onGPU // on a device: see deviceDo
	n     int
	shape tensor.Shape
	out   buffer
}

func (op *sqErrGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *sqErrGrad) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, sqErrGradCPU[float32], sqErrGradCPU[float64])
}

// sqErrGradCPU is sqErrGrad's run on the CPU in T.
func sqErrGradCPU[T float](op *sqErrGrad, p *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(p.Dtype(), false, op.shape...)
	sqErrBackward(data[T](p), vals[1].Data().([]T), vals[2].Data().([]T), upstream(vals[3]), data[T](out))
	return out, nil
}

func sqErrBackward[T float](p, y, w []T, up float64, dp []T) {
	for i, v := range p {
		dp[i] = T(up * 2 * float64(w[i]) * (float64(v) - float64(y[i])))
	}
}

// upstream is a scalar gradient (the seed of a differentiation, on
// the host on either device) as a float64.
func upstream(v gorgonia.Value) float64 {
	switch s := v.Data().(type) {
	case float32:
		return float64(s)
	case float64:
		return s
	}
	panic("ops: an upstream gradient that is not a scalar")
}

// Inner adds ⟨x, g⟩ = Σ x ⊙ g, a scalar, to x's graph; its gradient with
// respect to x is g (times the upstream gradient), and g gets none.
// package engine differentiates it for the trunk's vector-Jacobian
// product with an upstream gradient g.
func Inner(x, g *gorgonia.Node) (*gorgonia.Node, error) {
	if !x.Shape().Eq(g.Shape()) {
		return nil, fmt.Errorf("inner product of shapes %v and %v", x.Shape(), g.Shape())
	}
	return apply(&innerOp{base: newBase("Inner", x.Dims(), g.Dims(), 0), shape: x.Shape().Clone()}, x, g)
}

type innerOp struct {
	base
	gpu   onGPU // on a device: see deviceDo
	shape tensor.Shape
}

func (op *innerOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

func (op *innerOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, innerCPU[float32], innerCPU[float64])
}

// innerCPU is innerOp's run on the CPU in T.
func innerCPU[T float](_ *innerOp, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	return scalarOf[T](dot(data[T](x), vals[1].Data().([]T))), nil
}

func dot[T float](a, b []T) float64 {
	var s float64
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return s
}

func (op *innerOp) DiffWRT(int) []bool { return []bool{true, false} }

func (op *innerOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(&scaleOp{base: op.derive("Inner∂x", len(op.shape), 0, len(op.shape)), shape: op.shape}, inputs[1], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, nil}, nil
}

// scaleOp is g·s for a tensor g and a scalar s.
type scaleOp struct {
	base
	gpu   onGPU // on a device: see deviceDo
	shape tensor.Shape
	out   buffer
}

func (op *scaleOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *scaleOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, scaleCPU[float32], scaleCPU[float64])
}

// scaleCPU is scaleOp's run on the CPU in T.
func scaleCPU[T float](op *scaleOp, g *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(g.Dtype(), false, op.shape...)
	scale(data[T](g), vals[1].Data().(T), data[T](out))
	return out, nil
}

func scale[T float](g []T, s T, dst []T) {
	for i, v := range g {
		dst[i] = v * s
	}
}
