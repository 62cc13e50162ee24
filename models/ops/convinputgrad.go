package ops

import (
	"slices"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// convGradInput is ∂L/∂x: the patches' gradient wᵀ·G, added back into
// the input positions (col2im), a chunk of examples at a time.
type convGradInput struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *convOp
	out buffer
}

func (op *convGradInput) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	g := op.fwd.g
	return tensor.Shape{g.n, g.c, g.h, g.w}, nil
}

func (op *convGradInput) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 1, convGradInputCPU[float32], convGradInputCPU[float64])
}

// convGradInputCPU is convGradInput's run on the CPU in T.
func convGradInputCPU[T float](op *convGradInput, gm *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	g := op.fwd.g
	out := op.out.get(gm.Dtype(), true, g.n, g.c, g.h, g.w)
	convBackInput(g, state[convState[T]](&op.fwd.state), vals[0].Data().([]T), data[T](gm), data[T](out))
	return out, nil
}

// convBackInput computes ∂L/∂x from the output gradient gm (channel-major)
// into dx, a chunk of examples at a time: the patches' gradient wᵀ·G,
// then col2im.
//
// Where col2im reads every entry of the patches' gradient (no tap in the
// padding) in float32, it clears each entry as it reads it, and the next
// product adds into the cleared buffer (β = 1) instead of having the BLAS
// clear it first (β = 0, a pass of its own over the buffer: most of the
// 4.6% of LeNet's step that OpenBLAS spent clearing outputs): the same
// additions onto the same zeros. The buffer, which only this function
// uses, is then all +0 between calls: zero when allocated, and cleared by
// every col2im after.
func convBackInput[T float](g geometry, st *convState[T], w, gm, dx []T) {
	p, rows, np := g.positions(), g.rows(), g.n*g.positions()
	if st32, ok := any(st).(*convState[float32]); ok && st32.wino {
		if winoBlocked(g) {
			winoBlockedInputGrad(g, st32, any(gm).([]float32), any(w).([]float32), any(dx).([]float32))
			return
		}
		winoInputGrad(g, st32, any(w).([]float32), any(dx).([]float32))
		return
	}
	if st32, ok := any(st).(*convState[float32]); ok && st32.pooledRows {
		pooledInputGrad(g, st32, any(w).([]float32), any(gm).([]float32), np, st32.pooledPer, any(dx).([]float32))
		return
	}
	if st32, ok := any(st).(*convState[float32]); ok && tapsBack(g) {
		tapInputGrad(g, st32, any(w).([]float32), any(gm).([]float32), np, any(dx).([]float32))
		return
	}
	chunk := g.chunk()
	taps := tapsOf(g)
	_, float32s := any(w).([]float32)
	clears := float32s && taps.runs != nil && !slices.Contains(taps.covered, false)
	planeRows := asm.ServesCol2imPlanes(g.stride, g.pad, g.w)
	var beta T // 0: the BLAS clears the buffer
	if clears {
		beta = 1
	}
	for n0 := 0; n0 < g.n; n0 += chunk {
		n1 := min(g.n, n0+chunk)
		cols := (n1 - n0) * p
		dcols := st.dcols.get(rows * cols)
		gemm(blas.Trans, blas.NoTrans, rows, cols, g.o, w, rows, gm[n0*p:], np, beta, dcols, cols)
		// Each image's planes of dx are its own: a helper may take half
		// of the chunk's images.
		shareRange(n1-n0, rows*cols, func(a, b int) {
			if clears && planeRows {
				col2imPlanes(g, any(dcols).([]float32), cols, n0, a, b, any(dx).([]float32))
				return
			}
			if clears {
				col2imRuns(g, taps, dcols[a*p:], cols, n0+a, n0+b, dx, true)
				return
			}
			col2imTaps(g, taps, dcols[a*p:], cols, n0+a, n0+b, dx)
		})
	}
}
