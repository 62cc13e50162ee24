package ops

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// Gather fills the device tensor dst, rows × width values (its first
// axis the rows), with rows of src, a matrix of width values a row in
// dst's dtype in device memory: row r of dst is scale·(row idx[r] of
// src), or zeros where idx[r] is negative. idx is rows int32 values in
// device memory. A batch is taken so from a data set held on the device
// (package engine): one launch, where copying it from the host would be
// an upload of its values.
func (d *Device) Gather(dst *tensor.Dense, src, idx gpu.Ptr, scale float64) error {
	rows := dst.Shape()[0]
	if rows < 1 {
		return fmt.Errorf("ops: gather into %v", dst.Shape())
	}
	width := dst.Shape().TotalSize() / rows
	l := d.launcher(dst.Dtype())
	l.run("gather_rows", rows*width, ptr(dst), src, idx, rows, width, scale)
	return l.err
}
