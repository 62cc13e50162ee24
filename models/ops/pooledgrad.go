package ops

import (
	"slices"
	"sync"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// A convolution whose output feeds a max-pool alone (LeNet's layers,
// Conv2d) has an output gradient that is zero but at each pool window's
// argmax: a quarter of it or less for a 2×2 pool, less still after the
// ReLU. Its gradients over the dense output gradient multiply all those
// zeros (LeNet's conv1: 10 filters × 81 taps over 784 positions an
// image); from the pool's own gradient they need one k×k window of the
// input per pool output (196 an image). So where the products read the
// input (directconv.go), the gradient matrix's row for each filter holds the
// pool's gradient instead of the dense one: for each image, each pool
// output's gradient routed to its input (zero where the ReLU stopped it),
// then those argmaxes. From these:
//
//   - one input channel and no input gradient (the images: LeNet's
//     conv1): the filter gradient sums the input's windows at the
//     argmaxes (asm.ConvPoolTaps), the rows of up to three passes of a
//     particle, which share its argmaxes, reading each window once;
//   - otherwise (conv2): the input is kept laid out rows × columns ×
//     channels (hwcInput), so that a window's row is k·C values in a
//     row; the filter gradient sums those windows (asm.ConvPoolRows) and
//     the input gradient adds each filter into them (asm.ConvPoolBack),
//     an image at a time, then put back in the graph's layout.
//
// The bias gradient, the dense gradient's channel sums, is made as before
// from the dense planes, made one example at a time where they stay in
// the cache: the same bits. The filter and input gradients sum in another
// order (each tap's products over the pool outputs in order), so their
// last bits differ from the dense products' (TestPooledFilterGrad).

// pooledRowsFit reports whether op may write the pool's gradient in
// place of the dense one (see above), but for the element type and
// whether the products read their input, known at its run; and with hwc
// whether the gradients read the input laid out rows × columns ×
// channels (asm.ConvPoolRows, asm.ConvPoolBack) rather than one channel
// (asm.ConvPoolTaps, which makes no input gradient).
func (op *convGradMatrix) pooledRowsFit() (fit, hwc bool) {
	g, c := op.g, op.fwd
	if op.pool == nil || g.stride != 1 || g.pad != 0 {
		return false, false
	}
	switch v := (g.k*g.c + 15) / 16; {
	case g.c == 1 && !c.inputGrad && g.k <= asm.MaxPoolTaps:
	case g.k <= asm.MaxPoolRowsTaps && v <= asm.MaxPoolRowsVectors:
		hwc = true
	default:
		return false, false
	}
	// Two values per pool output must fit in a row's share of an image,
	// and the routines divide an image's positions, below 2¹⁶.
	if 2*op.pool.fwd.g.positions() > g.positions() || g.positions() >= 1<<16 {
		return false, false
	}
	// The bias gradient must read the sums made here, not the matrix.
	return !c.bias || op.rowSums != nil, hwc
}

// poolToPooledRows is poolToChannelMajor writing the pool's gradient
// rather than the dense one into dst (the rows described above), with
// the same channel sums to the bit: each example's dense planes are made
// in planes (four of g.positions() values) and summed there as
// poolToChannelMajor sums them in dst.
func poolToPooledRows(g geometry, pool *poolOp, dy, dst []float32, part [][4]float64, sums []float64, spread bool) {
	p, pp := g.positions(), pool.g.positions()
	var order []int32
	if spread {
		order = spreadOrder(pool.g)
	}
	row := g.n * p
	clear(part)
	shareRange(g.o, len(dst), func(o0, o1 int) {
		buf := planeScratch.Get().(*[]float32)
		defer planeScratch.Put(buf)
		if cap(*buf) < 4*p {
			*buf = make([]float32, 4*p)
		}
		planes := (*buf)[:4*p]
		for n := range g.n {
			for o := o0; o < o1; o++ {
				at := (n*g.o + o) * pp
				arg, grad := pool.argmax[at:at+pp], dy[at:at+pp]
				v := dst[o*row+n*pp:][:pp]
				off := dst[o*row+g.n*pp+n*pp:][:pp]
				if order != nil {
					asm.PooledEntriesInOrder(v, off, grad, arg, order)
					continue
				}
				asm.PooledEntriesFloat32(v, off, grad, arg)
			}
			if part == nil {
				continue
			}
			o := o0
			if asm.SumsFourPlanes(p) {
				for ; o+4 <= o1; o += 4 {
					for j := range 4 {
						at := (n*g.o + o + j) * pp
						poolGradPlane(pool.g, pool.argmax[at:at+pp], dy[at:at+pp], planes[j*p:(j+1)*p])
					}
					asm.Sum4PlanesFloat32(planes, p, p, (*[4][4]float64)(part[o:o+4]))
				}
			}
			for ; o < o1; o++ {
				at := (n*g.o + o) * pp
				plane := planes[:p]
				poolGradPlane(pool.g, pool.argmax[at:at+pp], dy[at:at+pp], plane)
				if p%4 == 0 {
					asm.CopySum4Float32(plane, plane, &part[o])
					continue
				}
				asm.AddTo4(&part[o], plane)
			}
		}
	})
	sumParts(part, sums)
}

// planeScratch holds poolToPooledRows' dense planes between runs; each
// half of a helped run takes its own.
var planeScratch = sync.Pool{New: func() any { return new([]float32) }}

// spreadOrder is an order of a pool's outputs (g its geometry) in which
// two outputs in a row are three or more apart in a row or a column, so
// that the windows asm.ConvPoolBack adds into one after the other seldom
// overlap: a load of values that the stores just before it wrote in part
// waits for them to reach the cache. It takes the outputs by their rows
// and columns modulo 3, then in order.
func spreadOrder(g geometry) []int32 {
	order := make([]int32, 0, g.oh*g.ow)
	for ry := range 3 {
		for rx := range 3 {
			for y := ry; y < g.oh; y += 3 {
				for x := rx; x < g.ow; x += 3 {
					order = append(order, int32(y*g.ow+x))
				}
			}
		}
	}
	return order
}

// pooledFilterGrad is dw (m × k·k, ld lddw) from m rows of pooled
// gradients (poolToPooledRows), ld values apart, over the batch x: g.o
// rows per run, and runs in groups of share (a particle's passes) whose
// argmaxes are the same, so that two or three runs' rows may read each
// window once (asm.ConvPoolTaps of two or three rows) where their argmaxes are indeed
// equal. Each row's gradient is its own chain of sums, the same alone or
// with others, so a helper may take some of the rows.
func pooledFilterGrad(g geometry, pp int, rows []float32, ld, m, share int, x []float32, dw []float32, lddw int) {
	entries := g.n * pp
	divOW := (1<<32 + g.ow - 1) / g.ow // ⌈2³²/ow⌉: a·divOW >> 32 = ⌊a/ow⌋ for a < 2¹⁶
	// units are the rows a routine takes: the first, and how many
	// runs' rows g.o apart share its argmaxes (one to three, as many as
	// a routine takes).
	type unit struct{ row, rows int }
	units := make([]unit, 0, m)
	argmaxes := func(r int) []float32 { return rows[r*ld+entries:][:entries] }
	most := min(3, asm.ConvPoolTapsRows(g.k))
	runs := m / g.o
	for run := 0; run < runs; {
		// The runs that may join this one: the rest of its group.
		join := 1
		if share > 1 {
			join = min(most, share-run%share, runs-run)
		}
		for f := range g.o {
			r, n := run*g.o+f, 1
			for n < join && slices.Equal(argmaxes(r), argmaxes(r+n*g.o)) {
				n++
			}
			units = append(units, unit{r, n})
			for i := n; i < join; i++ { // those that differ, alone
				units = append(units, unit{r + i*g.o, 1})
			}
		}
		run += join
	}
	shareRange(len(units), m*entries*g.k, func(u0, u1 int) {
		for _, u := range units[u0:u1] {
			n := u.rows
			for i := range n {
				clear(dw[(u.row+i*g.o)*lddw:][:g.k*g.k])
			}
			row := rows[u.row*ld:]
			asm.ConvPoolTaps(g.k, n, &row[0], 4*g.o*ld, &row[entries], pp, g.n, &x[0], 4*g.h*g.w, 4*g.w, &dw[u.row*lddw], 4*g.o*lddw, divOW, g.w-g.ow)
		}
	})
}

// hwcInput sets dst to the batch x (images of channels × rows ×
// columns) laid out rows × columns × channels, with 64 values to spare
// after the last image for the routines' whole vectors; idx is
// hwcIndices(g).
func hwcInput(g geometry, x []float32, dst *scratch[float32], idx []int32) {
	size := g.h * g.w * g.c
	out := dst.get(g.n*size + 64)
	*dst = out
	clear(out[g.n*size:])
	for n := range g.n {
		asm.GatherFloat32(out[n*size:][:size], x[n*size:][:size], idx)
	}
}

// hwcIndices returns, for each value of an image laid out rows × columns
// × channels, its index in the image laid out channels × rows × columns
// (toHWC), and the other way round (toCHW): the transposes as gathers
// (asm.GatherFloat32).
func hwcIndices(g geometry) (toHWC, toCHW []int32) {
	hw := g.h * g.w
	toHWC, toCHW = make([]int32, hw*g.c), make([]int32, hw*g.c)
	for i := range hw {
		for c := range g.c {
			toHWC[i*g.c+c] = int32(c*hw + i)
			toCHW[c*hw+i] = int32(i*g.c + c)
		}
	}
	return toHWC, toCHW
}

// pooledFilterGradHWC is pooledFilterGrad for an input of several
// channels laid out rows × columns × channels (hwcInput): each row's
// window rows are summed in a routine's lanes, kx and channel, then put in
// the filters' order.
func pooledFilterGradHWC(g geometry, pp int, rows []float32, ld, m int, x []float32, dw []float32, lddw int) {
	entries, v := g.n*pp, (g.k*g.c+15)/16
	divOW := (1<<32 + g.ow - 1) / g.ow
	shareRange(m, m*entries*g.k*v*16, func(r0, r1 int) {
		var sums [28 * 16]float32
		for r := r0; r < r1; r++ {
			row := rows[r*ld:]
			asm.ConvPoolRows(g.k, v, &row[0], &row[entries], pp, g.n, &x[0], 4*g.h*g.w*g.c, 4*g.w*g.c, &sums[0], divOW, g.w-g.ow, 4*g.c)
			out := dw[r*lddw:][:g.rows()]
			for ky := range g.k {
				for kx := range g.k {
					for c := range g.c {
						out[(c*g.k+ky)*g.k+kx] = sums[ky*16*v+kx*g.c+c]
					}
				}
			}
		}
	})
}

// pooledInputGrad is the input gradient dx (images of channels × rows ×
// columns) from g.o rows of pooled gradients, ld values apart: for each
// image, each filter's values times each of its pool outputs' gradient
// added into the window at the argmax (asm.ConvPoolBack), in an image laid
// out rows × columns × channels, then put in dx's order and cleared for
// the next. Each entry of dx is the same sum of products as col2im of
// wᵀ·G makes (the dense gradient's zeros aside), in another order. Each
// image is its own: a helper may take some of the images. The
// transposes are gathers: it needs AVX-512, as the routines do.
func pooledInputGrad(g geometry, st *convState[float32], w []float32, rows []float32, ld int, pp int, dx []float32) {
	entries, v := g.n*pp, (g.k*g.c+15)/16
	divOW := (1<<32 + g.ow - 1) / g.ow
	// The filters laid out as their windows: k rows of k·C values, kx
	// then channel, each row in v vectors.
	size := g.k * v * 16
	wh := st.backW.get(g.o * size)
	clear(wh)
	for f := range g.o {
		for c := range g.c {
			for ky := range g.k {
				for kx := range g.k {
					wh[f*size+ky*16*v+kx*g.c+c] = w[f*g.rows()+(c*g.k+ky)*g.k+kx]
				}
			}
		}
	}
	hw := g.h * g.w
	shareRange(g.n, g.n*g.o*pp*size, func(a, b int) {
		buf := planeScratch.Get().(*[]float32)
		defer planeScratch.Put(buf)
		if n := hw*g.c + 64; len(*buf) < n {
			*buf = make([]float32, n)
		}
		img := (*buf)[:hw*g.c+64]
		clear(img)
		for n := a; n < b; n++ {
			for f := range g.o {
				row := rows[f*ld:]
				asm.ConvPoolBack(g.k, v, &row[n*pp], &row[entries+n*pp], pp, &wh[f*size], &img[0], 4*g.w*g.c, divOW, g.w-g.ow, 4*g.c)
			}
			asm.GatherFloat32(dx[n*hw*g.c:][:hw*g.c], img, st.toCHW)
			clear(img)
		}
	})
}
