package ops

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convGradFilters is ∂L/∂w = G·colsᵀ, from the patches the forward run
// kept.
type convGradFilters struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *convOp
	out buffer
}

func (op *convGradFilters) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	g := op.fwd.g
	return tensor.Shape{g.o, g.c, g.k, g.k}, nil
}

func (op *convGradFilters) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, convGradFiltersCPU[float32], convGradFiltersCPU[float64])
}

// convGradFiltersCPU is convGradFilters' run on the CPU in T.
func convGradFiltersCPU[T float](op *convGradFilters, gm *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	g := op.fwd.g
	if op.fwd.stackRuns > 0 {
		// Stacked: FlushFilterGrads computes it with the other runs'.
		if err := op.fwd.keep(gm); err != nil {
			return nil, err
		}
		return op.out.get(gm.Dtype(), true, g.o, g.c, g.k, g.k), nil
	}
	out := op.out.get(gm.Dtype(), false, g.o, g.c, g.k, g.k)
	np := g.n * g.positions()
	st := state[convState[T]](&op.fwd.state)
	if st32, ok := any(st).(*convState[float32]); ok && ownFilterGrad(g, st32, data[float32](gm), data[float32](out)) {
		return out, nil
	}
	sumOverPositions(g.o, g.rows(), np, data[T](gm), np, st.cols, np, data[T](out), g.rows(), &st.dwPart)
	return out, nil
}

// ownFilterGrad sets dw to the filter gradient, in float32, from the
// output gradients gm where the forward run took one of the faster
// products (Winograd's, the pooled rows, the taps), and reports whether
// it did.
func ownFilterGrad(g geometry, st *convState[float32], gm, dw []float32) bool {
	np := g.n * g.positions()
	switch {
	case st.wino:
		winoFilterGrad(g, st, gm, dw)
	case st.pooledRows && st.inputHWC:
		pooledFilterGradHWC(g, st.pooledPer, gm, np, g.o, st.input, dw, g.rows())
	case st.pooledRows:
		pooledFilterGrad(g, st.pooledPer, gm, np, g.o, 1, st.input, dw, g.rows())
	case st.tapped:
		tapGradient(g, st, gm, g.o, dw)
	default:
		return false
	}
	return true
}
