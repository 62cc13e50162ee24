package ops

import (
	"math"
	"slices"
	"sync"
)

// A convolution whose output feeds a max-pool alone (LeNet's layers,
// Conv2d) has an output gradient that is zero but at each pool window's
// argmax: a quarter of it or less for a 2×2 pool, less still after the
// ReLU. The filter gradient over the dense gradient multiplies all those
// zeros (LeNet's conv1: 10 filters × 81 taps over 784 positions an
// image); from the pool's own gradient it needs one k×k window of the
// input per pool output (196 an image). So where the convolution's input
// gradient is not wanted (the images: the first layer), the input has
// one channel and filters of at most maxPoolTaps, and the products read
// the input (taps.go), the gradient matrix's row for each filter holds
// the pool's gradient instead of the dense one: for each image, each pool
// output's gradient routed to its input (zero where the ReLU stopped it),
// then those argmaxes. The filter gradient is then made from the input's
// windows at those argmaxes (gemmPoolTapsKxR). The bias
// gradient, the dense gradient's channel sums, is made as before from
// the dense planes, made one example at a time where they stay in the
// cache: the same bits. The filter gradient's sums run in another order
// (each tap's products over an image's pool outputs in order, then image
// by image), so its last bits differ from the dense product's
// (TestPooledFilterGrad).

// pooledGrads lets a convolution's gradient matrix hold its pool's
// gradient (above); tests turn it off to compare.
var pooledGrads = true

// maxPoolTaps is the widest filter gemmPoolTapsKxR takes.
const maxPoolTaps = 14

// poolTapsFunc is a pool taps kernel, gemmPoolTapsKxR (internal/genkernels
// documents them). arg holds int32 positions as float32 bits: the
// gradient matrix's row holds them beside the values.
type poolTapsFunc func(v *float32, ldv int, arg *float32, entries, images int, x *float32, imageX, rowX int, dw *float32, lddw, divOW, skip int)

// pooledRowsFit reports whether op may write the pool's gradient in
// place of the dense one (see above), but for the element type and
// whether the products read their input, known at its run.
func (op *convGradMatrix) pooledRowsFit() bool {
	g, c := op.g, op.fwd
	if op.pool == nil || c.inputGrad || g.c != 1 || g.k > maxPoolTaps || g.stride != 1 || g.pad != 0 {
		return false
	}
	// Two values per pool output must fit in a row's share of an image,
	// and the kernels divide an image's positions, below 2¹⁶.
	if 2*op.pool.fwd.g.positions() > g.positions() || g.positions() >= 1<<16 {
		return false
	}
	// The bias gradient must read the sums made here, not the matrix.
	return !c.bias || op.rowSums != nil
}

// poolToPooledRows is poolToChannelMajor writing the pool's gradient
// rather than the dense one into dst (the rows described above), with
// the same channel sums to the bit: each example's dense planes are made
// in planes (four of g.positions() values) and summed there as
// poolToChannelMajor sums them in dst.
func poolToPooledRows(g geometry, pool *poolOp, dy, dst []float32, part [][4]float64, sums []float64) {
	p, pp := g.positions(), pool.g.positions()
	row := g.n * p
	clear(part)
	helpRange(g.o, len(dst), func(o0, o1 int) {
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
				pooledEntries(v, off, grad, arg)
			}
			if part == nil {
				continue
			}
			o := o0
			if p%4 == 0 && useAVX2 {
				for ; o+4 <= o1; o += 4 {
					for j := range 4 {
						at := (n*g.o + o + j) * pp
						poolGradPlane(pool.g, pool.argmax[at:at+pp], dy[at:at+pp], planes[j*p:(j+1)*p])
					}
					sum4PlanesFloat32(planes, p, p, (*[4][4]float64)(part[o:o+4]))
				}
			}
			for ; o < o1; o++ {
				at := (n*g.o + o) * pp
				plane := planes[:p]
				poolGradPlane(pool.g, pool.argmax[at:at+pp], dy[at:at+pp], plane)
				if p%4 == 0 {
					copySum4Float32(plane, plane, &part[o])
					continue
				}
				addTo4(&part[o], plane)
			}
		}
	})
	sumParts(part, sums)
}

// planeScratch holds poolToPooledRows' dense planes between runs; each
// half of a helped run takes its own.
var planeScratch = sync.Pool{New: func() any { return new([]float32) }}

// pooledEntries writes a plane's pool outputs' entries: v[q] = grad[q]
// and arg[q] = argmax[q] (as float32 bits) where the output has an
// argmax, both zero where the ReLU stopped its gradient (argmax −1),
// without a branch on it: it goes either way at random. It is kept out
// of line: inlined into poolToPooledRows's loops, its values lived on
// the stack.
//
//go:noinline
func pooledEntries(v, arg, grad []float32, argmax []int32) {
	v, arg = v[:len(argmax)], arg[:len(argmax)]
	grad = grad[:len(argmax)]
	for q, a := range argmax {
		keep := uint32(^(a >> 31)) // all ones where a ≥ 0
		v[q] = math.Float32frombits(math.Float32bits(grad[q]) & keep)
		arg[q] = math.Float32frombits(uint32(a) & keep)
	}
}

// pooledFilterGrad is dw (m × k·k, ld lddw) from m rows of pooled
// gradients (poolToPooledRows), ld values apart, over the batch x: g.o
// rows per run, and runs in groups of share (a particle's passes) whose
// argmaxes are the same, so that two runs' rows may read each window
// once (gemmPoolTapsKx2) where their argmaxes are indeed equal. Each row's
// gradient is its own chain of sums, the same alone or paired, so a
// helper may take some of the rows.
func pooledFilterGrad(g geometry, pp int, rows []float32, ld, m, share int, x []float32, dw []float32, lddw int) {
	entries := g.n * pp
	divOW := (1<<32 + g.ow - 1) / g.ow // ⌈2³²/ow⌉: a·divOW >> 32 = ⌊a/ow⌋ for a < 2¹⁶
	// units are the rows a kernel call takes: the first, and whether
	// the row g.o below shares it.
	type unit struct {
		row    int
		paired bool
	}
	units := make([]unit, 0, m)
	argmaxes := func(r int) []float32 { return rows[r*ld+entries:][:entries] }
	for run := 0; run < m/g.o; {
		if share < 2 || run%share == share-1 || run+1 == m/g.o {
			for f := range g.o {
				units = append(units, unit{run*g.o + f, false})
			}
			run++
			continue
		}
		for f := range g.o {
			r := run*g.o + f
			if slices.Equal(argmaxes(r), argmaxes(r+g.o)) {
				units = append(units, unit{r, true})
			} else {
				units = append(units, unit{r, false}, unit{r + g.o, false})
			}
		}
		run += 2
	}
	helpRange(len(units), m*entries*g.k, func(u0, u1 int) {
		for _, u := range units[u0:u1] {
			n := 1
			if u.paired {
				n = 2
			}
			for i := range n {
				clear(dw[(u.row+i*g.o)*lddw:][:g.k*g.k])
			}
			row := rows[u.row*ld:]
			poolTapsKernels[g.k][n](&row[0], 4*g.o*ld, &row[entries], pp, g.n, &x[0], 4*g.h*g.w, 4*g.w, &dw[u.row*lddw], 4*g.o*lddw, divOW, g.w-g.ow)
		}
	})
}
