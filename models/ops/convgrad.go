package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// SymDiff returns the gradients with respect to the input (nil when not
// wanted), the filters and the bias (if any), all from the output's
// gradient laid out once as the forward product's (O, batch·positions)
// matrix.
func (op *convOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	src := op // whose patches the gradient reads
	if op.twin != nil {
		if src = op.twin; !src.keepCols {
			return nil, fmt.Errorf("%s: replaying an op that was never differentiated", op.name)
		}
	}
	src.keepCols = true
	mat := &convGradMatrix{base: op.derive(op.name+"∂out", 4, 2), g: op.g, fwd: src}
	in := grad
	if pg, ok := grad.Op().(*poolGrad); ok && foldPoolGrads && op.dev == nil && pg.dev == nil {
		// The output's gradient is a pool's (LeNet's layers): made here
		// from the pool's output gradient, straight into the matrix's
		// layout, rather than in the input's layout and then reordered.
		mat.pool, pg.folded = pg, true
		in = firstInput(grad)
	}
	gm, err := gorgonia.ApplyOp(mat, in)
	if err != nil {
		return nil, err
	}
	grads := make(gorgonia.Nodes, len(inputs))
	if op.inputGrad {
		if grads[0], err = gorgonia.ApplyOp(&convGradInput{base: op.derive(op.name+"∂x", 4, 2, 4), fwd: src}, inputs[1], gm); err != nil {
			return nil, err
		}
	}
	if grads[1], err = gorgonia.ApplyOp(&convGradFilters{base: op.derive(op.name+"∂w", 2, 4), fwd: src}, gm); err != nil {
		return nil, err
	}
	if op.bias {
		shape := inputs[2].Shape().Clone()
		// The bias's gradient is the output gradient's channel sums,
		// which the reordering makes as it passes over it (positions a
		// multiple of 4, see toChannelMajor).
		bg := &biasGrad{base: op.derive(op.name+"∂b", 2, len(shape)), shape: shape}
		if op.g.positions()%4 == 0 {
			m := gm.Op().(*convGradMatrix)
			m.rowSums, m.part = make([]float64, op.g.o), make([][4]float64, op.g.o)
			bg.summed = m
		}
		if grads[2], err = gorgonia.ApplyOp(bg, gm); err != nil {
			return nil, err
		}
	}
	// Once it is known who reads the sums.
	var hwc bool
	if mat.pooledRows, hwc = mat.pooledRowsFit(); mat.pooledRows && hwc {
		src.hwcInput = true
	}
	return grads, nil
}

// convGradMatrix lays the output's gradient (batch, O, OH, OW) out as the
// forward product's matrix (O, batch·OH·OW). Where the output feeds a
// pool alone, it reads the pool's output gradient instead and makes the
// output's gradient itself, plane by plane into the matrix (pool is set:
// poolToChannelMajor): the same values, without writing them in the
// output's layout and reading them back.
type convGradMatrix struct {
	base
	gpu  onGPU // on a device: see deviceDo
	g    geometry
	fwd  *convOp   // whose stack, when armed, it writes into (StackFilterGrads)
	pool *poolGrad // when set, the pool gradient it makes in its stead
	// pooledRows is set when, in float32 with the products reading their
	// input, it writes the pool's gradient instead (pooledgrad.go).
	pooledRows bool
	out        buffer
	// rowSums, when set (a bias's gradient reads them), receives each
	// channel's sum of the gradient as the reordering passes over it,
	// with part for their partial sums (see toChannelMajor).
	rowSums []float64
	part    [][4]float64
}

func (op *convGradMatrix) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.g.o, op.g.n * op.g.positions()}, nil
}

func (op *convGradMatrix) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, convGradMatrixCPU[float32], convGradMatrixCPU[float64])
}

// convGradMatrixCPU is convGradMatrix's run on the CPU in T.
func convGradMatrixCPU[T float](op *convGradMatrix, grad *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	out := op.fwd.nextSlot(grad.Dtype()) // the stack's next run, if armed
	if out == nil {
		out = op.out.get(grad.Dtype(), false, op.g.o, op.g.n*op.g.positions())
	}
	switch {
	case op.pool != nil && op.pooledRowsRun(grad, out):
	case op.pool != nil:
		poolToChannelMajor(op.g, op.pool.fwd, data[T](grad), data[T](out), op.part, op.rowSums)
	default:
		toChannelMajor(op.g, data[T](grad), data[T](out), op.part, op.rowSums)
	}
	if st, ok := op.fwd.state.(*convState[float32]); ok && st.wino {
		st.winoSummed, st.winoFilterDone = false, false
		if !winoBlocked(op.g) { // else made a block at a time, with the gradients
			winoGradTransform(op.g, st, data[float32](out))
		}
	}
	return out, nil
}

// pooledRowsRun, for a gradient grad in float32, sets whether this run
// writes the pool's gradient in place of the dense one (pooledgrad.go)
// and, if so, writes it into out; it reports whether it did.
func (op *convGradMatrix) pooledRowsRun(grad, out *tensor.Dense) bool {
	if grad.Dtype() != tensor.Float32 {
		return false
	}
	st := state[convState[float32]](&op.fwd.state)
	st.pooledRows = op.pooledRows && pooledGrads && asm.ServesConvPools() && st.tapped && (op.g.c == 1 && !op.fwd.inputGrad || st.inputHWC)
	if !st.pooledRows {
		return false
	}
	st.pooledPer = op.pool.fwd.g.positions()
	poolToPooledRows(op.g, op.pool.fwd, data[float32](grad), data[float32](out), op.part, op.rowSums, st.inputHWC)
	return true
}

// firstInput is the first input of n, an op's node.
func firstInput(n *gorgonia.Node) *gorgonia.Node {
	inputs := n.Graph().From(n.ID())
	inputs.Next()
	return inputs.Node().(*gorgonia.Node)
}

// poolToChannelMajor is toChannelMajor of the gradient pool sends to its
// input (poolGradPlane) from its output's gradient dy: each plane made
// where dst wants it, then summed where it lies, in toChannelMajor's
// order, so that dst and sums get the same bits. An example's planes are
// all made before they are summed: the pool's masked stores cannot
// forward their values to loads right after them.
func poolToChannelMajor[T float](g geometry, pool *poolOp, dy, dst []T, part [][4]float64, sums []float64) {
	p, pp := g.positions(), pool.g.positions()
	clear(part)
	d32, float32s := any(dst).([]float32)
	// Each channel's planes and sums are its own: a helper may take half
	// of the channels.
	shareRange(g.o, len(dst), func(o0, o1 int) {
		for n := range g.n {
			for o := o0; o < o1; o++ {
				at := (n*g.o + o) * pp
				poolGradPlane(pool.g, pool.argmax[at:at+pp], dy[at:at+pp], dst[o*g.n*p+n*p:][:p])
			}
			o := o0
			if part != nil && float32s && asm.SumsFourPlanes(p) {
				// Four channels' sums side by side.
				for ; o+4 <= o1; o += 4 {
					asm.Sum4PlanesFloat32(d32[o*g.n*p+n*p:], g.n*p, p, (*[4][4]float64)(part[o:o+4]))
				}
			}
			for ; o < o1; o++ {
				plane := dst[o*g.n*p+n*p:][:p]
				switch {
				case part == nil:
				case float32s && p%4 == 0:
					in := d32[o*g.n*p+n*p:][:p]
					asm.CopySum4Float32(in, in, &part[o])
				default:
					asm.AddTo4(&part[o], plane)
				}
			}
		}
	})
	sumParts(part, sums)
}

// toChannelMajor reorders src (examples, o, positions) into dst (o,
// examples × positions). With part (o partial sums), it also sets
// sums[o] to channel o's sum, the very sum biasGrad makes of dst's row o
// (asm.AddTo4's four partial sums), which needs positions a multiple of 4:
// then adding an example's positions in turn gives each value the
// partial sum it gets in the whole row.
func toChannelMajor[T float](g geometry, src, dst []T, part [][4]float64, sums []float64) {
	p := g.positions()
	clear(part)
	if s32, ok := any(src).([]float32); ok && part != nil && p%4 == 0 {
		// The copy and the sums in one pass (asm.CopySum4Float32).
		d32 := any(dst).([]float32)
		// Each channel's rows and sums are its own: a helper may take
		// half of the channels.
		shareRange(g.o, len(s32), func(o0, o1 int) {
			for n := range g.n {
				for o := o0; o < o1; o++ {
					asm.CopySum4Float32(d32[o*g.n*p+n*p:][:p], s32[(n*g.o+o)*p:][:p], &part[o])
				}
			}
		})
		sumParts(part, sums)
		return
	}
	for n := range g.n {
		for o := range g.o {
			piece := src[(n*g.o+o)*p:][:p]
			copy(dst[o*g.n*p+n*p:o*g.n*p+(n+1)*p], piece)
			if part != nil {
				asm.AddTo4(&part[o], piece)
			}
		}
	}
	sumParts(part, sums)
}

// sumParts sets sums[o] to the sum of channel o's four partial sums, in
// asm.AddTo4's order.
func sumParts(part [][4]float64, sums []float64) {
	for o := range part {
		sums[o] = (part[o][0] + part[o][1]) + (part[o][2] + part[o][3])
	}
}
