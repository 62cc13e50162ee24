package ops

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// The bias gradient of a convolution keeps partial sums (a), in float64.
func (op *biasGrad) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	dt := vals[0].Dtype()
	rows, cols := vals[0].Shape()[0], vals[0].Shape()[1]
	l := op.dev.launcher(dt)
	out := l.out(&op.out, dt, op.shape...)
	if out == nil {
		return l.result(op.name, out)
	}
	if op.byColumn {
		// (rows, cols, 1): the column sums, as channel_partial (each
		// entry its own partial) and sum_columns_to would add them.
		l.run("column_sums", cols, ptr(out), ptr(vals[0]), rows, cols)
	} else {
		// (1, rows, cols): each row's sum. A convolution's rows are few
		// (its channels) and long (batch × positions): each is cut into
		// chunks summed by threads of their own, then the chunks' sums
		// added in order, rather than one thread walking a whole row.
		chunks := rowChunks(cols)
		part := l.scratch(&op.gpu.a, rows*chunks, 8)
		l.run("channel_partial", rows*chunks, part, gpu.Ptr(0), ptr(vals[0]), gpu.Ptr(0), gpu.Ptr(0), gpu.Ptr(0), 2, rows, chunks, cols/chunks)
		l.run("sum_rows_to", rows, ptr(out), part, rows, chunks)
	}
	return l.result(op.name, out)
}

// maxRowChunk is the longest chunk of a row one thread sums in a bias
// gradient on the device.
const maxRowChunk = 1024

// rowChunks is the number of equal chunks a row of cols values is cut
// into: the fewest whose length is at most maxRowChunk and divides cols
// (cols itself, chunks of one, where no other divisor fits).
func rowChunks(cols int) int {
	for k := max(1, (cols+maxRowChunk-1)/maxRowChunk); k < cols; k++ {
		if cols%k == 0 {
			return k
		}
	}
	return max(1, cols)
}
