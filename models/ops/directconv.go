package ops

import (
	"slices"
	"sync"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// A convolution with stride 1, no padding and output rows of 8 to 32
// positions (LeNet's layers: 28 and 10) can skip its patch matrix where
// the processor has AVX-512: its forward product and its filter gradient
// read each tap's values from the input itself (asm.ConvTapRows and
// asm.ConvTapDots), and its input gradient adds each tap's gradient
// back into shifted planes (asm.ConvTapBack). The patches of
// LeNet's conv1 over a batch of 256 are 65 MB, made once per worker and
// step, those of conv2 26 MB, made for every particle; the inputs are 1.3
// and 2 MB, and an image's 5 or 8 KB stay in the core's first cache
// while all its output rows are made. An output row of 17 to 32
// positions is two vectors of 16; rows of up to 16 are one vector each,
// up to four rows at a time.
//
// The forward product's entries are the very chains of asm.GemmRows over
// the patches (TestTapsMatchPatches: the same bits). The filter
// gradient's lanes are another grouping of the positions than
// asm.GemmDots's or the BLAS's (each output row's columns mod 16 for rows
// of more than 16, each image's positions mod 16 for shorter rows, not
// the batch's positions), so its last bits differ; like asm.GemmDots's,
// they do not depend on how many runs are stacked or who computes which
// half.

// tapsMinRow is the shortest output row read from the input: below 8
// positions a row, most of a vector's lanes would idle. The longest is
// the routines' (asm.MaxTapRow).
const tapsMinRow = 8

// readsTaps reports whether g's products read its input rather than
// patches, in float32.
func readsTaps(g geometry) bool {
	return tappedPatches && g.ow >= tapsMinRow && asm.ServesConvTaps(g.stride, g.pad, g.ow)
}

// tapVectors is how many vectors of 16 columns an output row of ow
// positions takes.
func tapVectors(ow int) int { return (ow + 15) / 16 }

// tapRowMasks is the masks of an output row's vectors, 16 bits each.
func tapRowMasks(ow int) int {
	if ow <= 16 {
		return 1<<ow - 1
	}
	return 0xFFFF | (1<<(ow-16)-1)<<16
}

// tapBlock is how tapForward computes output rows from y on: outRows of
// them in vectors vectors (masked by masks), each vector's inputs stepX
// bytes after the last's and its outputs stepC bytes.
func tapBlock(g geometry, y int) (outRows, vectors, masks, stepX, stepC int) {
	if g.ow > 16 {
		return 1, 2, tapRowMasks(g.ow), 64, 64
	}
	outRows = min(asm.MaxTapVectors, g.oh-y)
	for v := range outRows {
		masks |= tapRowMasks(g.ow) << (16 * v)
	}
	return outRows, outRows, masks, 4 * g.w, 4 * g.ow
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
// copy of x for the filter gradient, and the taps' offsets. A leaf
// input's copy (the images') is kept while the batch stays the same: a
// worker's particles share it, so no particle needs its own (savedpass.go);
// any other input is copied at every run, and set aside with the
// particle's other values.
func tapsInput[T float](op *convOp, st *convState[T], x []T) bool {
	if _, ok := any(x).([]float32); !ok || !readsTaps(op.g) {
		return false
	}
	keep := op.keepCols
	hwc := op.hwcInput && pooledGrads && asm.ServesConvPools()
	switch {
	case keep && hwc:
		st32 := any(st).(*convState[float32])
		if st32.toHWC == nil {
			st32.toHWC, st32.toCHW = hwcIndices(op.g)
		}
		hwcInput(op.g, any(x).([]float32), &st32.input, st32.toHWC)
	case keep && (op.inputGrad || !st.tapped || st.inputHWC || !slices.Equal(st.input, x)):
		st.input = append(st.input[:0], x...)
	}
	st.tapped, st.inputHWC = keep, keep && hwc
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

// tapForward is C = w·patches for images n0 ≤ n < n1 of x, read from x:
// m rows of filters (rows() values each), C's row r at c[r·ldc], its
// columns (n−n0)·positions() + output position. A helper may take half
// of the images.
func tapForward(g geometry, offs []int, x, w []float32, m int, c []float32, ldc, n0, n1 int) {
	p, rows := g.positions(), g.rows()
	shareRange(n1-n0, m*(n1-n0)*p, func(a, b int) {
		for n := n0 + a; n < n0+b; n++ {
			for y := 0; y < g.oh; {
				outRows, v, masks, stepX, stepC := tapBlock(g, y)
				in := x[n*g.c*g.h*g.w+y*g.w:]
				out := c[(n-n0)*p+y*g.ow:]
				asm.ConvTapRows(v, m, w, rows, &in[0], offs, rows, out, ldc, masks, stepX, stepC)
				y += outRows
			}
		}
	})
}

// tapFilterGrad is dw (m × rows(), ld lddw) = gm·patchesᵀ over the whole
// batch, read from x: gm's row r at gm[r·ldg], its columns the batch's
// positions. Like sumOverPositions it sums the first half of the images
// into dw and the second apart, then adds them, so that a helper may take
// either half.
func tapFilterGrad(g geometry, offs []int, gm []float32, ldg int, x []float32, m int, dw []float32, lddw int, second *scratch[float32]) {
	rows := g.rows()
	half := second.get(m * rows)
	mid := g.n / 2
	images := func(dw []float32, lddw, n0, n1 int) { tapFilterGradRows(g, offs, gm, ldg, x, m, dw, lddw, n0, n1) }
	if g.ow <= 16 {
		images = func(dw []float32, lddw, n0, n1 int) { tapFilterGradFlat(g, gm, ldg, x, m, dw, lddw, n0, n1) }
	}
	offerHalf(
		func() { images(dw, lddw, 0, mid) },
		func() { images(half, rows, mid, g.n) },
	)
	addRows(dw, lddw, half, m, rows)
}

// tapFilterGradRows is dw = gm·patchesᵀ over images n0 ≤ n < n1, in
// tiles of five rows of gm by five taps, an output row of 17 to 32
// positions (two vectors) at a time, over blocks of about 1,600
// positions: a tile's five rows of output gradients over them (32 KB)
// stay in the core's first cache while every tile of taps reads them
// (LeNet's conv1: 2 images).
func tapFilterGradRows(g geometry, offs []int, gm []float32, ldg int, x []float32, m int, dw []float32, lddw, n0, n1 int) {
	rows, p, hw := g.rows(), g.positions(), g.c*g.h*g.w
	buf, part := asm.LaneSums(m * rows)
	defer asm.PutLaneSums(buf)
	v, masks, rowG, rowX, imageX := tapVectors(g.ow), tapRowMasks(g.ow), 4*g.ow, 4*g.w, 4*(hw-g.oh*g.w)
	block := max(1, 1600/p)
	for b0 := n0; b0 < n1; b0 += block {
		images := min(block, n1-b0)
		asm.ForTiles(m, rows, 5, 5, func(shape asm.Tile, r, t int) {
			asm.ConvTapDots(v, shape, &gm[r*ldg+b0*p], ldg, &x[b0*hw], &offs[t], &part[(r*rows+t)*16], rows, images, g.oh, rowG, rowX, imageX, 0, masks)
		})
	}
	asm.SumLanes(part, m, rows, 0, dw, lddw)
}

// flatTaps lays a block of images out so that every tap's values over an
// image's output positions are one run, as the output gradient's are:
// for each channel and each column offset kx of the filters, the input
// shifted left by kx and cut to the output's width, h rows of ow one
// after the other. Tap (c, ky, kx) is then the run of that plane from
// ky·ow, and its dot product with the gradient takes sixteen positions
// at a time whatever the rows' width: an image of LeNet's conv2 (10 × 10
// outputs) is 6 vectors and one of 4 positions where its rows of 10 were
// 10 vectors. (Rows of 17 to 32, two vectors, gain too little to pay for
// the copies: tapFilterGradRows.)
type flatTaps struct {
	g     geometry  // what it is laid out for, but for the batch size
	plane int       // values per (channel, kx) plane: h·ow
	runs  []asm.Run // one channel's copies: the input's rows into its k planes
	offs  []int     // each tap's byte offset from an image's first plane
	x     []float32
	dx    []float32 // an image's planes of input gradient (tapInputGrad), zeros between uses
}

// flatScratch holds flatTaps between calls; each half of tapFilterGrad
// takes its own.
var flatScratch = sync.Pool{New: func() any { return new(flatTaps) }}

// layout sets f up for g.
func (f *flatTaps) layout(g geometry) {
	g.n = 0
	if f.g == g && f.runs != nil {
		return
	}
	f.g, f.plane = g, g.h*g.ow
	f.runs = f.runs[:0]
	for kx := range g.k {
		for y := range g.h {
			f.runs = append(f.runs, asm.Run{Pos: int32(kx*f.plane + y*g.ow), At: int32(y*g.w + kx), N: int32(g.ow)})
		}
	}
	f.offs = f.offs[:0]
	for c := range g.c {
		for ky := range g.k {
			for kx := range g.k {
				f.offs = append(f.offs, 4*((c*g.k+kx)*f.plane+ky*g.ow))
			}
		}
	}
}

// fill lays out images b0 ≤ n < b0+images of x.
func (f *flatTaps) fill(g geometry, x []float32, b0, images int) {
	chw, planes := g.h*g.w, g.k*f.plane
	if n := images * g.c * planes; cap(f.x) < n {
		f.x = make([]float32, n)
	}
	for i := range images {
		for c := range g.c {
			asm.CopyRunsFloat32(f.x[(i*g.c+c)*planes:][:planes], x[((b0+i)*g.c+c)*chw:][:chw], f.runs)
		}
	}
}

// flatBlockPositions is about how many positions tapFilterGradFlat takes
// at a time: a tile's five rows of output gradients over them (16 KB)
// and the planes its five taps read (LeNet's conv2: 28 KB) stay in the
// core's first cache while the tile runs over them.
const flatBlockPositions = 800

// tapFilterGradFlat is dw = gm·patchesᵀ over images n0 ≤ n < n1, in
// tiles of five rows of gm by five taps, over blocks of images laid out
// by flatTaps: each image's positions sixteen at a time, then the
// positions left over (fewer than 16) under a mask.
func tapFilterGradFlat(g geometry, gm []float32, ldg int, x []float32, m int, dw []float32, lddw, n0, n1 int) {
	rows, p := g.rows(), g.positions()
	buf, part := asm.LaneSums(m * rows)
	defer asm.PutLaneSums(buf)
	f := flatScratch.Get().(*flatTaps)
	defer flatScratch.Put(f)
	f.layout(g)
	whole, rest := p/16, p%16
	image := 4 * g.c * g.k * f.plane // bytes from an image's planes to the next's
	block := max(1, flatBlockPositions/p)
	for b0 := n0; b0 < n1; b0 += block {
		images := min(block, n1-b0)
		f.fill(g, x, b0, images)
		gb := gm[b0*p:]
		asm.ForTiles(m, rows, 5, 5, func(shape asm.Tile, r, t int) {
			lanes := &part[(r*rows+t)*16]
			if whole > 0 {
				asm.ConvTapDots(1, shape, &gb[r*ldg], ldg, &f.x[0], &f.offs[t], lanes, rows, images, whole, 64, 64, image-64*whole, 4*rest, 0xFFFF)
			}
			if rest > 0 {
				asm.ConvTapDots(1, shape, &gb[r*ldg+16*whole], ldg, &f.x[16*whole], &f.offs[t], lanes, rows, images, 1, 4*p, image, 0, 0, 1<<rest-1)
			}
		})
	}
	asm.SumLanes(part, m, rows, 0, dw, lddw)
}

// tapsBack reports whether g's input gradient in float32 is read back
// into shifted planes (tapInputGrad) rather than made through patches.
func tapsBack(g geometry) bool { return readsTaps(g) && g.o <= asm.MaxBackFilters }

// tapInputGrad is dx = col2im(wᵀ·G) without the patches' gradient: for
// each image, every tap's gradient over the image's output positions,
// sixteen at a time (asm.ConvTapBack), is added into the image's planes
// laid out as flatTaps lays out the input, where a tap's positions are
// one run; then the planes are added into dx's rows and cleared for the
// next image (asm.AddRunsClearingFloat32). Each entry of dx is thus the same
// sum of the same products as col2im makes of wᵀ·G, in another order
// (over the filter rows ky of each column kx, then the columns), so its
// last bits differ (TestTapInputGrad). The taps run in the order of ky,
// then c and kx, so that no two of a routine's eight add into the same
// values. Each image's planes are its own: a helper may take some of the
// images.
func tapInputGrad(g geometry, st *convState[float32], w, gm []float32, ldg int, dx []float32) {
	rows, p, hw := g.rows(), g.positions(), g.h*g.w
	if len(st.backOffs) != rows {
		st.backOffs, st.backOrder = make([]int, 0, rows), make([]int, 0, rows)
		plane := g.h * g.ow
		for ky := range g.k {
			for c := range g.c {
				for kx := range g.k {
					st.backOrder = append(st.backOrder, (c*g.k+ky)*g.k+kx)
					st.backOffs = append(st.backOffs, 4*((c*g.k+kx)*plane+ky*g.ow))
				}
			}
		}
	}
	wt := st.backW.get(rows * g.o)
	for i, t := range st.backOrder {
		for f := range g.o {
			wt[i*g.o+f] = w[f*rows+t]
		}
	}
	shareRange(g.n, g.n*rows*p, func(a, b int) {
		f := flatScratch.Get().(*flatTaps)
		defer flatScratch.Put(f)
		f.layout(g)
		planes := g.c * g.k * f.plane
		if len(f.dx) < planes {
			f.dx = make([]float32, planes)
		}
		for n := a; n < b; n++ {
			for j := 0; j < p; j += 16 {
				mask := 0xFFFF
				if p-j < 16 {
					mask = 1<<(p-j) - 1
				}
				asm.ConvTapBack(g.o, &gm[n*p+j], ldg, &wt[0], rows, &st.backOffs[0], &f.dx[j], mask)
			}
			for c := range g.c {
				asm.AddRunsClearingFloat32(dx[(n*g.c+c)*hw:][:hw], f.dx[c*g.k*f.plane:][:g.k*f.plane], f.runs)
			}
		}
	})
}
