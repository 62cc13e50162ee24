package ops

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Linear adds x·w + b to x's graph, followed by max(0, ·) if relu: x is
// (batch, …), flattened to (batch, in); w is (in, out); b has out values
// in any shape. The result is (batch, out).
//
// Once differentiated the op keeps copies of its input and output for
// the gradient, so that the gradient never depends on what later nodes do
// with those tensors (and a replayed copy of the op, see Record, can use
// them).
func Linear(x, w, b *gorgonia.Node, relu bool) (*gorgonia.Node, error) {
	xs, ws := x.Shape(), w.Shape()
	if len(xs) < 2 || len(ws) != 2 || xs.TotalSize()/xs[0] != ws[0] {
		return nil, fmt.Errorf("linear: input %v and weights %v, want (batch, …) with %v values per example and (in, out)", xs, ws, ws[0])
	}
	if b.Shape().TotalSize() != ws[1] {
		return nil, fmt.Errorf("linear: bias of shape %v for %d outputs", b.Shape(), ws[1])
	}
	name := "Linear"
	if relu {
		name = "LinearReLU"
	}
	op := &linearOp{
		base: newBase(name, len(xs), 2, b.Dims(), 2),
		n:    xs[0], in: ws[0], out: ws[1], relu: relu,
		xShape: xs.Clone(), bShape: b.Shape().Clone(),
		// A leaf input (the data) needs no gradient.
		inputGrad: !x.IsVar(),
	}
	return apply(op, x, w, b)
}

// linearOp is the forward layer.
type linearOp struct {
	base
	gpu            onGPU // on a device: see deviceDo
	n, in, out     int
	relu           bool
	inputGrad      bool
	xShape, bShape tensor.Shape
	keep           bool // set when differentiated: keep x and y
	twin           *linearOp
	kept           any // *linearState[T]
	outBuf         buffer
}

type linearState[T float] struct {
	x, y scratch[T]
}

func (op *linearOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.n, op.out}, nil
}

func (op *linearOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, linearCPU[float32], linearCPU[float64])
}

func (op *linearOp) replayed() (gorgonia.Value, bool) {
	if op.twin == nil {
		return nil, false
	}
	return op.twin.outBuf.t, true
}

// linearCPU is linearOp's run on the CPU in T.
func linearCPU[T float](op *linearOp, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.outBuf.get(x.Dtype(), false, op.n, op.out)
	linearForward(op, state[linearState[T]](&op.kept), data[T](x), vals[1].Data().([]T), vals[2].Data().([]T), data[T](out))
	return out, nil
}

func linearForward[T float](op *linearOp, st *linearState[T], x, w, b, y []T) {
	for i := range op.n {
		copy(y[i*op.out:(i+1)*op.out], b)
	}
	gemm(blas.NoTrans, blas.NoTrans, op.n, op.out, op.in, x, op.in, w, op.out, 1, y, op.out)
	if op.relu {
		for i, v := range y {
			y[i] = max(v, 0)
		}
	}
	if op.keep {
		copy(st.x.get(len(x)), x)
		copy(st.y.get(len(y)), y)
	}
}

func (op *linearOp) DiffWRT(int) []bool { return []bool{op.inputGrad, true, true} }

// SymDiff returns the gradients with respect to x, w and b, from the
// output's gradient masked by the ReLU (if any).
func (op *linearOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	src := op
	if op.twin != nil {
		src = op.twin
	}
	if !src.keep && src != op {
		return nil, fmt.Errorf("%s: replaying an op that was never differentiated", op.name)
	}
	src.keep = true
	gm, err := gorgonia.ApplyOp(&linearGradOutput{base: op.derive(op.name+"∂out", 2, 2), fwd: src}, grad)
	if err != nil {
		return nil, err
	}
	var dx *gorgonia.Node
	if op.inputGrad {
		if dx, err = gorgonia.ApplyOp(&linearGradInput{base: op.derive(op.name+"∂x", 2, 2, len(op.xShape)), fwd: src}, inputs[1], gm); err != nil {
			return nil, err
		}
	}
	dw, err := gorgonia.ApplyOp(&linearGradWeight{base: op.derive(op.name+"∂w", 2, 2), fwd: src}, gm)
	if err != nil {
		return nil, err
	}
	db, err := gorgonia.ApplyOp(&biasGrad{base: op.derive(op.name+"∂b", 2, len(op.bShape)), shape: op.bShape.Clone(), byColumn: true}, gm)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}

// linearGradOutput is the output's gradient where the ReLU passed the
// value (all of it without ReLU), (batch, out).
type linearGradOutput struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *linearOp
	out buffer
}

func (op *linearGradOutput) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.fwd.n, op.fwd.out}, nil
}

func (op *linearGradOutput) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, linearGradOutputCPU[float32], linearGradOutputCPU[float64])
}

// linearGradOutputCPU is linearGradOutput's run on the CPU in T.
func linearGradOutputCPU[T float](op *linearGradOutput, g *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(g.Dtype(), false, op.fwd.n, op.fwd.out)
	maskByOutput(op.fwd.relu, data[T](g), state[linearState[T]](&op.fwd.kept).y, data[T](out))
	return out, nil
}

func maskByOutput[T float](relu bool, g, y, dst []T) {
	if !relu {
		copy(dst, g)
		return
	}
	for i, v := range g {
		if y[i] > 0 {
			dst[i] = v
		} else {
			dst[i] = 0
		}
	}
}

// linearGradInput is ∂L/∂x = G·wᵀ, in x's shape.
type linearGradInput struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *linearOp
	out buffer
}

func (op *linearGradInput) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.fwd.xShape.Clone(), nil
}

func (op *linearGradInput) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 1, linearGradInputCPU[float32], linearGradInputCPU[float64])
}

// linearGradInputCPU is linearGradInput's run on the CPU in T.
func linearGradInputCPU[T float](op *linearGradInput, gm *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	f := op.fwd
	out := op.out.get(gm.Dtype(), false, f.xShape...)
	gemm(blas.NoTrans, blas.Trans, f.n, f.in, f.out, data[T](gm), f.out, vals[0].Data().([]T), f.out, 0, data[T](out), f.in)
	return out, nil
}

// linearGradWeight is ∂L/∂w = xᵀ·G, from the kept input.
type linearGradWeight struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *linearOp
	out buffer
}

func (op *linearGradWeight) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.fwd.in, op.fwd.out}, nil
}

func (op *linearGradWeight) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, linearGradWeightCPU[float32], linearGradWeightCPU[float64])
}

// linearGradWeightCPU is linearGradWeight's run on the CPU in T.
func linearGradWeightCPU[T float](op *linearGradWeight, gm *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	f := op.fwd
	out := op.out.get(gm.Dtype(), false, f.in, f.out)
	gemm(blas.Trans, blas.NoTrans, f.in, f.out, f.n, state[linearState[T]](&f.kept).x, f.in, data[T](gm), f.out, 0, data[T](out), f.out)
	return out, nil
}
