package ops

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// biasGrad is ∂L/∂b: the row sums of G (O × positions), or with
// byColumn the column sums of G (batch × O), in the bias's shape.
type biasGrad struct {
	base
	gpu      onGPU // on a device: see deviceDo
	shape    tensor.Shape
	byColumn bool
	out      buffer
	summed   *convGradMatrix // when set, the op whose run made the sums
}

func (op *biasGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *biasGrad) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, biasGradCPU[float32], biasGradCPU[float64])
}

// biasGradCPU is biasGrad's run on the CPU in T.
func biasGradCPU[T float](op *biasGrad, gm *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(gm.Dtype(), false, op.shape...)
	if m := op.summed; m != nil {
		setFloats(out, m.rowSums)
		return out, nil
	}
	rows, cols := gm.Shape()[0], gm.Shape()[1]
	sums(data[T](gm), rows, cols, op.byColumn, data[T](out))
	return out, nil
}

// sums sets dst[r] to the sum of row r of m (rows × cols), or with
// byColumn dst[c] to the sum of column c, accumulated in float64.
func sums[T float](m []T, rows, cols int, byColumn bool, dst []T) {
	if byColumn {
		for c := range cols {
			var s float64
			for r := range rows {
				s += float64(m[r*cols+c])
			}
			dst[c] = T(s)
		}
		return
	}
	for r := range rows {
		// Their order shows in the last bits of a float64 result; in a
		// float32 one only for a sum within about 2⁻²⁹ of a rounding
		// boundary.
		var s [4]float64
		asm.AddTo4(&s, m[r*cols:(r+1)*cols])
		dst[r] = T((s[0] + s[1]) + (s[2] + s[3]))
	}
}
