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
	if op.dev != nil {
		return op.deviceDo(vals)
	}
	gm, err := dense(vals[0], op.name)
	if err != nil {
		return nil, err
	}
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
	switch gm.Dtype() {
	case tensor.Float32:
		st := state[convState[float32]](&op.fwd.state)
		if st.wino {
			winoFilterGrad(g, st, data[float32](gm), data[float32](out))
			break
		}
		if st.pooledRows {
			if st.inputHWC {
				pooledFilterGradHWC(g, st.pooledPer, data[float32](gm), np, g.o, st.input, data[float32](out), g.rows())
				break
			}
			pooledFilterGrad(g, st.pooledPer, data[float32](gm), np, g.o, 1, st.input, data[float32](out), g.rows())
			break
		}
		if st.tapped {
			tapGradient(g, st, data[float32](gm), g.o, data[float32](out))
			break
		}
		sumOverPositions(g.o, g.rows(), np, data[float32](gm), np, st.cols, np, data[float32](out), g.rows(), &st.dwPart)
	default:
		st := state[convState[float64]](&op.fwd.state)
		sumOverPositions(g.o, g.rows(), np, data[float64](gm), np, st.cols, np, data[float64](out), g.rows(), &st.dwPart)
	}
	return out, nil
}
