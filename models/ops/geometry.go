package ops

import (
	"sync"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// geometry is a convolution's sizes.
type geometry struct {
	n, c, h, w  int // input
	o, k        int // filters
	stride, pad int
	oh, ow      int // output
}

func (g geometry) positions() int { return g.oh * g.ow } // per example
func (g geometry) rows() int      { return g.c * g.k * g.k }

// chunk is how many examples a product without the whole batch's im2col
// matrix takes at a time: enough positions for an efficient product.
func (g geometry) chunk() int {
	return min(g.n, max(1, 1024/g.positions()))
}

// im2col writes the patches of examples n0 ≤ n < n1 of x as columns of
// cols (rows() × ld): row (c, i, j), column (n−n0)·positions() + output
// position; taps in the padding are zero. Like col2im it walks the
// geometry's taps and writes cols row by row.
func im2col[T float](g geometry, x []T, n0, n1 int, cols []T, ld int) {
	im2colTaps(g, tapsOf(g), x, n0, n1, cols, ld)
}

// im2colTaps is im2col with the given taps of g.
func im2colTaps[T float](g geometry, taps *taps, x []T, n0, n1 int, cols []T, ld int) {
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	for c := range g.c {
		for t := range kk {
			row := cols[(c*kk+t)*ld:]
			full := taps.covered[t] // every output position's tap is inside
			for n := n0; n < n1; n++ {
				dst := row[(n-n0)*p:][:p]
				plane := x[(n*g.c+c)*hw:][:hw]
				if !full {
					clear(dst)
				}
				if taps.runs != nil {
					runs := taps.runs[taps.start[t]:taps.start[t+1]]
					if dst32, ok := any(dst).([]float32); ok {
						asm.CopyRunsFloat32(dst32, any(plane).([]float32), runs)
						continue
					}
					for _, r := range runs {
						copy(dst[r.Pos:r.Pos+r.N], plane[r.At:r.At+r.N])
					}
					continue
				}
				pos := taps.pos[taps.start[t]:taps.start[t+1]]
				at := taps.at[taps.start[t]:taps.start[t+1]]
				at = at[:len(pos)]
				for e, q := range pos {
					dst[q] = plane[at[e]]
				}
			}
		}
	}
}

// inside is the range [lo, hi) of output positions along an axis whose
// tap at kernel offset j falls inside the input (of size in; out
// positions).
func (g geometry) inside(j, in, out int) (lo, hi int) {
	// ox·stride − pad + j ≥ 0 and ≤ in − 1.
	if d := g.pad - j; d > 0 {
		lo = (d + g.stride - 1) / g.stride
	}
	if last := in - 1 + g.pad - j; last >= 0 {
		hi = min(out, last/g.stride+1)
	}
	return lo, max(lo, hi)
}

// col2im adds the columns of cols (laid out as im2col writes them) back
// into the input positions they came from, for examples n0 ≤ n < n1.
//
// It walks the geometry's taps (see tapsOf) rather than the rows of
// each plane, and reads cols row by row, in order: ResNet-18's deep
// layers have planes of 2×2 to 8×8 positions, where loops over rows
// spend more on their bounds than on the additions.
func col2im[T float](g geometry, cols []T, ld, n0, n1 int, dx []T) {
	col2imTaps(g, tapsOf(g), cols, ld, n0, n1, dx)
}

// col2imTaps is col2im with the given taps of g.
func col2imTaps[T float](g geometry, taps *taps, cols []T, ld, n0, n1 int, dx []T) {
	if taps.runs != nil {
		col2imRuns(g, taps, cols, ld, n0, n1, dx, false)
		return
	}
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	for c := range g.c {
		for t := range kk {
			row := cols[(c*kk+t)*ld:]
			pos := taps.pos[taps.start[t]:taps.start[t+1]]
			at := taps.at[taps.start[t]:taps.start[t+1]]
			at = at[:len(pos)]
			for n := n0; n < n1; n++ {
				src := row[(n-n0)*p:][:p]
				plane := dx[(n*g.c+c)*hw:][:hw]
				for e, q := range pos {
					plane[at[e]] += src[q]
				}
			}
		}
	}
}

// col2imRuns is col2im for taps listed as runs. In float32 an assembly
// loop adds the runs (asm.AddRunsFloat32: 1.3 ns per addition in Go, the
// largest cost of LeNet's step after the products); with clearCols
// (float32 only) it also sets each entry of cols it reads to +0.
func col2imRuns[T float](g geometry, taps *taps, cols []T, ld, n0, n1 int, dx []T, clearCols bool) {
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	cols32, _ := any(cols).([]float32)
	dx32, _ := any(dx).([]float32)
	add := asm.AddRunsFloat32
	if clearCols {
		add = asm.AddRunsClearingFloat32
	}
	for c := range g.c {
		for t := range kk {
			row := cols[(c*kk+t)*ld:]
			runs := taps.runs[taps.start[t]:taps.start[t+1]]
			for n := n0; n < n1; n++ {
				at, to := (c*kk+t)*ld+(n-n0)*p, (n*g.c+c)*hw
				if cols32 != nil {
					add(dx32[to:][:hw], cols32[at:][:p], runs)
					continue
				}
				asm.AddRuns(dx[to:][:hw], row[(n-n0)*p:][:p], runs)
			}
		}
	}
}

// col2imPlanes is col2imRuns with clearing for images n0+a ≤ n < n0+b of
// a chunk from n0, a plane at a time (asm.Col2imPlaneFloat32).
func col2imPlanes(g geometry, cols []float32, ld, n0, a, b int, dx []float32) {
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	for n := a; n < b; n++ {
		for c := range g.c {
			asm.Col2imPlaneFloat32(&cols[c*kk*ld+n*p], ld, &dx[((n0+n)*g.c+c)*hw], g.h, g.w, g.k, g.oh, g.ow)
		}
	}
}

// taps lists, for each kernel offset t = i·k + j of a geometry, the
// output positions whose tap at that offset falls inside the input and
// the input positions they fall on (within a plane). With stride 1 and
// rows of at least minRun positions it lists them as runs (the valid
// part of an output row falls on consecutive inputs), otherwise one by
// one: a loop per run costs more than an index per position when runs
// are short.
type taps struct {
	start   []int32 // offset t's entries: start[t] ≤ e < start[t+1]
	covered []bool  // per offset: whether its taps of every output position are inside
	runs    []asm.Run
	pos     []int32 // output position oy·ow + ox, without runs
	at      []int32 // input position y·w + x, without runs
}

// minRun is the shortest output row col2im and im2col walk as runs
// (BenchmarkCol2im, BenchmarkIm2col: with the float32 runs in assembly,
// rows of 8 go 1.2-1.8 times as fast as runs as position by position
// and rows of 4 no slower; rows of 2 were slower with the Go loops).
const minRun = 4

// tapCache holds the taps of each geometry met, keyed by the geometry
// without its batch size.
var tapCache sync.Map // geometry → *taps

func tapsOf(g geometry) *taps {
	g.n = 0
	if t, ok := tapCache.Load(g); ok {
		return t.(*taps)
	}
	actual, _ := tapCache.LoadOrStore(g, makeTaps(g, g.stride == 1 && g.ow >= minRun))
	return actual.(*taps)
}

// makeTaps lists g's taps, as runs (stride 1 only) or one by one.
func makeTaps(g geometry, asRuns bool) *taps {
	t := &taps{start: make([]int32, 1, g.k*g.k+1)}
	for i := range g.k {
		ylo, yhi := g.inside(i, g.h, g.oh)
		for j := range g.k {
			xlo, xhi := g.inside(j, g.w, g.ow)
			for oy := ylo; oy < yhi && xlo < xhi; oy++ {
				at := (oy*g.stride-g.pad+i)*g.w + xlo*g.stride - g.pad + j
				if asRuns {
					t.runs = append(t.runs, asm.Run{Pos: int32(oy*g.ow + xlo), At: int32(at), N: int32(xhi - xlo)})
					continue
				}
				for ox := xlo; ox < xhi; ox++ {
					t.pos = append(t.pos, int32(oy*g.ow+ox))
					t.at = append(t.at, int32(at))
					at += g.stride
				}
			}
			t.start = append(t.start, int32(len(t.runs)+len(t.pos)))
			t.covered = append(t.covered, (yhi-ylo)*(xhi-xlo) == g.positions())
		}
	}
	return t
}

// im2colHelped is im2col with half of the images on a helper where one
// waits: each image's columns are its own.
func im2colHelped[T float](g geometry, x []T, n0, n1 int, cols []T, ld int) {
	p := g.positions()
	shareRange(n1-n0, g.rows()*(n1-n0)*p, func(a, b int) {
		im2col(g, x, n0+a, n0+b, cols[a*p:], ld)
	})
}
