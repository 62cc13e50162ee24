package ops

import "slices"

// A convolution over a leaf input with stride 1, no padding and output
// rows of 17 to 32 positions (LeNet's first layer: 28) can skip its patch
// matrix where the processor has AVX-512: its forward product and its
// filter gradient read each tap's values from the input itself, one
// output row at a time, in the kernels gemmTapRows and gemmTapDots
// (kernels_amd64.s). The patches of LeNet's conv1 over a batch of 256
// are 65 MB, made once per worker and step and read by the forward
// product and the filter gradient's; the images are 1.3 MB, and an
// image's 5 KB stay in the core's first cache while all its output rows
// are made.
//
// The forward product's entries are the very chains of gemmRows over
// the patches (TestTapsMatchPatches: the same bits). The filter
// gradient's lanes are another grouping of the positions than
// gemmDots's (each output row's columns mod 16, not the batch's
// positions mod 16), so its last bits differ; like gemmDots's, they do
// not depend on how many runs are stacked or who computes which half.

// tapsMinRow and tapsMaxRow bound the output rows read from the input:
// two vectors of 16 a row, the second one masked.
const (
	tapsMinRow = 17
	tapsMaxRow = 32
)

// tappedPatches turns the reading of patches from the input on or off
// (TestTapsChangeLittle compares both).
var tappedPatches = true

// readsTaps reports whether g's products read its input rather than
// patches, in float32.
func readsTaps(g geometry) bool {
	return tappedPatches && useAVX512 && g.stride == 1 && g.pad == 0 && g.ow >= tapsMinRow && g.ow <= tapsMaxRow
}

// tapOffsets returns, for each row (c, i, j) of g's filters, the byte
// offset of its tap from an output row's first input.
func tapOffsets(g geometry) []int {
	offs := make([]int, 0, g.rows())
	for c := range g.c {
		for i := range g.k {
			for j := range g.k {
				offs = append(offs, 4*((c*g.h+i)*g.w+j))
			}
		}
	}
	return offs
}

// tapsInput reports whether op's products over the batch x read their
// taps from it, and sets st up for them: where op is differentiated, a
// copy of x for the filter gradient (the same batch's copy is kept), and
// the taps' offsets. Only a leaf input's (the images'): a worker's
// particles share it, so no particle needs its own copy (held.go).
func tapsInput[T float](op *convOp, st *convState[T], x []T) bool {
	if _, ok := any(x).([]float32); !ok || op.inputGrad || !readsTaps(op.g) {
		return false
	}
	keep := op.keepCols
	if keep && (!st.tapped || !slices.Equal(st.input, x)) {
		st.input = append(st.input[:0], x...)
	}
	st.tapped = keep
	if st.offs == nil {
		st.offs = tapOffsets(op.g)
	}
	return true
}

// tapProduct is tapForward in T, which tapsInput said is float32.
func tapProduct[T float](g geometry, st *convState[T], x, w []T, m int, c []T, ldc, n0, n1 int) {
	tapForward(g, st.offs, any(x).([]float32), any(w).([]float32), m, any(c).([]float32), ldc, n0, n1)
}

// tapGradient is tapFilterGrad in T: dw (m × rows()) from the output
// gradients gm (m × the batch's positions) and the batch st kept
// (tapsInput).
func tapGradient[T float](g geometry, st *convState[T], gm []T, m int, dw []T) {
	tapFilterGrad(g, st.offs, any(gm).([]float32), g.n*g.positions(), any([]T(st.input)).([]float32), m, any(dw).([]float32), g.rows(), any(&st.dwPart).(*scratch[float32]))
}

// tapMasks is the masks of an output row's two vectors of 16 columns.
func tapMasks(ow int) int {
	return 0xFFFF | (1<<(ow-16)-1)<<16
}

// tapForward is C = w·patches for images n0 ≤ n < n1 of x, read from x:
// m rows of filters (rows() values each), C's row r at c[r·ldc], its
// columns (n−n0)·positions() + output position. A helper may take half
// of the images.
func tapForward(g geometry, offs []int, x, w []float32, m int, c []float32, ldc, n0, n1 int) {
	p, rows := g.positions(), g.rows()
	helpRange(n1-n0, m*(n1-n0)*p, func(a, b int) {
		masks := tapMasks(g.ow)
		for n := n0 + a; n < n0+b; n++ {
			for y := range g.oh {
				in := x[n*g.c*g.h*g.w+y*g.w:]
				out := c[(n-n0)*p+y*g.ow:]
				for i0 := 0; i0 < m; i0 += 10 {
					tapRowsKernels[min(10, m-i0)](&w[i0*rows], rows, &in[0], &offs[0], rows, &out[i0*ldc], ldc, masks)
				}
			}
		}
	})
}

// tapsBlock is how many images tapFilterGrad takes at a time: a tile's
// four rows of output gradients over them (25 KB for LeNet's conv1) stay
// in the core's first cache while every tile of taps reads them.
const tapsBlock = 2

// tapFilterGrad is dw (m × rows(), ld lddw) = gm·patchesᵀ over the whole
// batch, read from x: gm's row r at gm[r·ldg], its columns the batch's
// positions. Like sumOverPositions it sums the first half of the images
// into dw and the second apart, then adds them, so that a helper may take
// either half.
func tapFilterGrad(g geometry, offs []int, gm []float32, ldg int, x []float32, m int, dw []float32, lddw int, second *scratch[float32]) {
	rows := g.rows()
	half := second.get(m * rows)
	mid := g.n / 2
	offerHalf(
		func() { tapFilterGradImages(g, offs, gm, ldg, x, m, dw, lddw, 0, mid) },
		func() { tapFilterGradImages(g, offs, gm, ldg, x, m, half, rows, mid, g.n) },
	)
	addRows(dw, lddw, half, m, rows)
}

// tapFilterGradImages is dw = gm·patchesᵀ over images n0 ≤ n < n1, in
// tiles of four rows of gm by five taps.
func tapFilterGradImages(g geometry, offs []int, gm []float32, ldg int, x []float32, m int, dw []float32, lddw, n0, n1 int) {
	rows, p, hw := g.rows(), g.positions(), g.c*g.h*g.w
	buf, part := laneSums(m * rows)
	defer dotsParts.Put(buf)
	masks, rowG, rowX, imageX := tapMasks(g.ow), 4*g.ow, 4*g.w, 4*(hw-g.oh*g.w)
	for b0 := n0; b0 < n1; b0 += tapsBlock {
		images := min(tapsBlock, n1-b0)
		forTiles(m, rows, func(shape tileShape, r, t int) {
			tapDotsKernels[shape](&gm[r*ldg+b0*p], ldg, &x[b0*hw], &offs[t], &part[(r*rows+t)*16], rows, images, g.oh, rowG, rowX, imageX, masks)
		})
	}
	sumLanes(part, m, rows, 0, dw, lddw)
}
