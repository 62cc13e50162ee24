package ops

import (
	"sync"

	"gonum.org/v1/gonum/blas"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// Winograd's minimal filtering F(2×2, 3×3) (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2016) for float32
// convolutions of 3×3 filters, stride 1 and padding 1 on planes of even
// sides: ResNet-18's convolutions inside its blocks. Each 2×2 block of
// output positions (a tile) is read from the 4×4 window of input around
// it, and in the transformed space the 3×3 filter's 36 multiplications
// per tile become 16, so the forward product and both gradients' take
// 16/36 of the im2col products' arithmetic:
//
//	forward        Y = Aᵀ[(G w Gᵀ) ⊙ (Bᵀ d B)]A
//	input grad     d̄ = B[(G w Gᵀ) ⊙ (A Ȳ Aᵀ)]Bᵀ, added over the windows
//	filter grad    w̄ = Gᵀ[Σ_tiles (A Ȳ Aᵀ) ⊙ (Bᵀ d B)]G
//
// The two gradients are the forward map's adjoint, so they read the same
// transforms: U = G w Gᵀ of the filters and V = Bᵀ d B of the input
// windows (made by the forward run and kept), and Z = A Ȳ Aᵀ of the
// output gradient (made once per backward pass, or a block of images at
// a time: winoBlockedInputGrad, read by both). Each of
// the 16 positions ξ of a transformed tile is one matrix product over
// channels: U_ξ (O × C) · V_ξ (C × tiles) forward, Z_ξ (O × tiles) ·
// V_ξᵀ for the filters, U_ξᵀ · Z_ξ for the input. The kept V holds 4
// values per input position and channel where im2col's patches hold 9.
//
// The transforms' entries are 0, ±1 and ±½, so the results are the
// convolution's up to float32 rounding, in another order of sums than
// the im2col products' (TestWinogradChangesLittle bounds the difference).
//
// The matrices, with ξ = 4i + j the transformed tile's row-major index:
//
//	Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
//	G  = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 −1 −1]

// winogradFits reports whether op's float32 runs use Winograd's
// products: a 3×3 convolution of stride 1 and padding 1 with output
// planes of even sides, whose input's gradient is wanted (not a layer on
// the images, whose patches the particles share), with no pool run in
// its stead and no stacking of its filter gradients armed.
func (op *convOp) winogradFits() bool {
	g := op.g
	return winogradConvs && g.k == 3 && g.stride == 1 && g.pad == 1 && g.oh%2 == 0 && g.ow%2 == 0 &&
		op.inputGrad && op.pool == nil && op.stackRuns == 0 && op.across.runs == 0 && op.dev == nil
}

// tiles is the number of 2×2 output tiles of the batch.
func (g geometry) tiles() int { return g.n * (g.oh / 2) * (g.ow / 2) }

// winoForward is convForward in Winograd's products: U of the filters
// and V of the input (kept in st.winoU and st.cols for the gradients),
// the 16 products, and the output tiles from them.
func winoForward(g geometry, st *convState[float32], x, w, bias, out []float32) {
	t := g.tiles()
	us, vs, ms := spaced(g.o*g.c), spaced(g.c*t), spaced(g.o*t)
	u := st.winoU.get(16 * us)
	filterTransform(g, w, u)
	st.winoUStale = false
	v := st.cols.get(16 * vs)
	shareRange(g.c, len(x), func(c0, c1 int) { inputTransform(g, x, c0, c1, v) })
	m := takeScratch(16 * ms)
	defer putScratch(m)
	for xi := range 16 {
		gemm(blas.NoTrans, blas.NoTrans, g.o, t, g.c, u[xi*us:], g.c, v[xi*vs:], t, 0, m[xi*ms:], t)
	}
	shareRange(g.o, len(out), func(o0, o1 int) { outputTransform(g, m, o0, o1, bias, out) })
}

// winoGradTransform sets st.winoZ to Z = A Ȳ Aᵀ of every output tile of
// the output gradient gm, laid out (O, batch·positions) as the forward
// product's matrix.
func winoGradTransform(g geometry, st *convState[float32], gm []float32) {
	z, idx := st.winoZ.get(16*spaced(g.o*g.tiles())), tileIndex(g, st)
	shareRange(g.o, len(gm), func(o0, o1 int) { gradTransform(g, gm, idx, o0, o1, z) })
}

// tileIndex is st's gradTileIndex of g, made on first use.
func tileIndex(g geometry, st *convState[float32]) []int32 {
	if len(st.winoIdx) != g.tiles() {
		st.winoIdx = gradTileIndex(g)
	}
	return st.winoIdx
}

// keptU is st's U of the filters w, remade from them if an exchange
// (savedpass.go) may have left another run's.
func keptU(g geometry, st *convState[float32], w []float32) []float32 {
	u := st.winoU.get(16 * spaced(g.o*g.c))
	if st.winoUStale {
		filterTransform(g, w, u)
		st.winoUStale = false
	}
	return u
}

// winoFilterGrad sets dw (O × C × 3 × 3) to the filters' gradient from
// the kept V and the pass's Z.
func winoFilterGrad(g geometry, st *convState[float32], gm, dw []float32) {
	if st.winoSummed { // by winoBlockedInputGrad, this pass
		filterGradTransform(g, st.winoSums.get(16*spaced(g.o*g.c)), dw)
		return
	}
	if winoBlocked(g) { // Z was left to the input gradient
		winoGradTransform(g, st, gm)
		st.winoFilterDone = true
	}
	t := g.tiles()
	vs, zs, ms := spaced(g.c*t), spaced(g.o*t), spaced(g.o*g.c)
	v, z := st.cols.get(16*vs), st.winoZ.get(16*zs)
	m := takeScratch(16 * ms)
	defer putScratch(m)
	for xi := range 16 {
		gemm(blas.NoTrans, blas.Trans, g.o, g.c, t, z[xi*zs:], t, v[xi*vs:], t, 0, m[xi*ms:], g.c)
	}
	filterGradTransform(g, m, dw)
}

// winoInputGrad sets dx (batch, C, H, W) to the input's gradient from
// the kept U (remade from the filters w after an exchange) and the
// pass's Z.
func winoInputGrad(g geometry, st *convState[float32], w, dx []float32) {
	t := g.tiles()
	us, zs, ds := spaced(g.o*g.c), spaced(g.o*t), spaced(g.c*t)
	u, z := keptU(g, st, w), st.winoZ.get(16*zs)
	d := takeScratch(16 * ds)
	defer putScratch(d)
	for xi := range 16 {
		gemm(blas.Trans, blas.NoTrans, g.c, t, g.o, u[xi*us:], g.c, z[xi*zs:], t, 0, d[xi*ds:], t)
	}
	if st.winoFoldSpacing != ds {
		st.winoFold, st.winoFoldSpacing = foldTableSpaced(g, ds), ds
	}
	shareRange(g.c, len(dx), func(c0, c1 int) { inputGradTransform(g, d, st.winoFold, c0, c1, dx) })
}

// A backward pass over a convolution with few channel pairs (winoBlocked:
// ResNet-18's first two stages, 64 and 128 channels on 16×16 and 8×8
// planes) makes Z and the input gradient's products a block of images at
// a time and uses each block at once, while it is in the core's cache:
// Z of the block's tiles, the filter gradient's products over them added
// into the sums, the input gradient's products and their transform into
// the block's planes. Over the whole batch at once, Z and the products
// (17 MB each on the first stage) went out to memory and were read back,
// and the products ran at about half the core's rate, bound by memory.

// Blocks are about winoBlockTiles tiles (whole images); a filter gradient
// adds its blocks in two fixed halves, each into its own sums, added
// after: a helper may take the second half, and the bits are the same
// whoever does. Tests shrink winoBlockTiles to have many blocks.
var (
	winoBlockTiles   = 128
	winoBlockedPairs = 128 * 128 // the most O·C run by blocks
)

// winoBlocked reports whether g's backward pass runs by blocks of images.
func winoBlocked(g geometry) bool { return g.o*g.c <= winoBlockedPairs }

// winoBlockedInputGrad sets dx (batch, C, H, W) to the input's gradient
// from the output gradient gm (O, batch·positions), the kept U (remade
// from the filters w after an exchange) and V, a block of images at a
// time, and leaves the filter gradient's summed products in st.winoSums
// for winoFilterGrad, unless the filter gradient was made first in this
// pass (st.winoFilterDone).
func winoBlockedInputGrad(g geometry, st *convState[float32], gm, w, dx []float32) {
	t := g.tiles()
	us, vs, ms := spaced(g.o*g.c), spaced(g.c*t), spaced(g.o*g.c)
	u, v, idx := keptU(g, st, w), st.cols.get(16*vs), tileIndex(g, st)
	tpi := t / g.n
	images := max(1, winoBlockTiles/tpi) // a block's
	blocks := (g.n + images - 1) / images
	bs := spaced(max(g.o, g.c) * images * tpi) // a block's transforms' spacing
	if st.winoFoldSpacing != bs {
		st.winoFold, st.winoFoldSpacing = foldTableSpaced(g, bs), bs
	}
	var first, second []float32
	if !st.winoFilterDone {
		m := st.winoSums.get(2 * 16 * ms)
		first, second = m[:16*ms], m[16*ms:]
	}
	// run adds the blocks b0 ≤ b < b1 into sums (16 × O × C, ms apart).
	run := func(b0, b1 int, sums []float32) {
		z, d := takeScratch(16*bs), takeScratch(16*bs)
		defer putScratch(z)
		defer putScratch(d)
		for b := b0; b < b1; b++ {
			n0, n1 := b*images, min(g.n, (b+1)*images)
			t0, tb := n0*tpi, (n1-n0)*tpi
			for o := range g.o {
				asm.WinogradGradTiles(z[o*tb:], bs, gm[o*g.n*g.positions():], idx[t0:t0+tb], g.ow)
			}
			var beta float32 = 1
			if b == b0 {
				beta = 0
			}
			for xi := range 16 {
				if sums != nil {
					gemmWhole(blas.NoTrans, blas.Trans, g.o, g.c, tb, z[xi*bs:], tb, v[xi*vs+t0:], t, beta, sums[xi*ms:], g.c)
				}
				gemmWhole(blas.Trans, blas.NoTrans, g.c, tb, g.o, u[xi*us:], g.c, z[xi*bs:], tb, 0, d[xi*bs:], tb)
			}
			hw := g.h * g.w
			for c := range g.c {
				asm.WinogradInputTiles(d[c*tb:], bs, tb)
				for n := n0; n < n1; n++ {
					asm.WinogradFold(dx[(n*g.c+c)*hw:][:hw], d[c*tb+(n-n0)*tpi:], st.winoFold)
				}
			}
		}
	}
	if blocks == 1 {
		run(0, 1, first)
	} else {
		cut := blocks / 2
		offerHalf(func() { run(0, cut, first) }, func() { run(cut, blocks, second) })
		if first != nil {
			addRows(first, len(first), second, 1, len(first))
		}
	}
	st.winoSummed = first != nil
}

// filterTransform sets u[ξ][o][c] to (G w_oc Gᵀ)[ξ].
func filterTransform(g geometry, w, u []float32) {
	oc := spaced(g.o * g.c)
	for f := range g.o * g.c {
		k := w[f*9 : f*9+9]
		// tmp = G k (4×3), by columns of k.
		var tmp [4][3]float32
		for j := range 3 {
			k0, k1, k2 := k[j], k[3+j], k[6+j]
			tmp[0][j] = k0
			tmp[1][j] = (k0 + k1 + k2) * 0.5
			tmp[2][j] = (k0 - k1 + k2) * 0.5
			tmp[3][j] = k2
		}
		for i := range 4 {
			r := &tmp[i]
			u[(4*i+0)*oc+f] = r[0]
			u[(4*i+1)*oc+f] = (r[0] + r[1] + r[2]) * 0.5
			u[(4*i+2)*oc+f] = (r[0] - r[1] + r[2]) * 0.5
			u[(4*i+3)*oc+f] = r[2]
		}
	}
}

// inputTransform sets v[ξ][c][t] to (Bᵀ d B)[ξ] of the 4×4 window d of
// channel c around tile t (zero outside the plane), for c0 ≤ c < c1.
//
// Bᵀ d takes the same four sums of the window's rows for every tile of a
// row of tiles, so they are made once a row of tiles, over the whole
// width (cols, a zero column on each side for the padding), and each
// tile's B is taken from its four columns of them: the same additions,
// in the same order, as taking d's window by window.
func inputTransform(g geometry, x []float32, c0, c1 int, v []float32) {
	th, tw := g.oh/2, g.ow/2
	ct := spaced(g.c * g.tiles())
	wp := g.w + 2
	var cols [4][]float32
	buf := make([]float32, 4*wp+g.w)
	for i := range cols {
		cols[i] = buf[i*wp : (i+1)*wp]
	}
	zero := buf[4*wp:] // a row of the padding
	for c := c0; c < c1; c++ {
		for n := range g.n {
			plane := x[(n*g.c+c)*g.h*g.w:][:g.h*g.w]
			dst := v[c*g.tiles()+n*th*tw:]
			row := func(r int) []float32 {
				if r < 0 || r >= g.h {
					return zero
				}
				return plane[r*g.w : (r+1)*g.w]
			}
			for ty := range th {
				r0, r1, r2, r3 := row(2*ty-1), row(2*ty), row(2*ty+1), row(2*ty+2)
				// cols[i][q+1] = (Bᵀ d)[i] at column q; the padding's stay
				// +0, as a window's zeros give.
				t0, t1, t2, t3 := cols[0][1:1+g.w], cols[1][1:1+g.w], cols[2][1:1+g.w], cols[3][1:1+g.w]
				for q := range g.w {
					d0, d1, d2, d3 := r0[q], r1[q], r2[q], r3[q]
					t0[q], t1[q], t2[q], t3[q] = d0-d2, d1+d2, d2-d1, d1-d3
				}
				for tx := range tw {
					at := ty*tw + tx
					for i := range 4 {
						r := cols[i][2*tx : 2*tx+4]
						dst[(4*i+0)*ct+at] = r[0] - r[2]
						dst[(4*i+1)*ct+at] = r[1] + r[2]
						dst[(4*i+2)*ct+at] = r[2] - r[1]
						dst[(4*i+3)*ct+at] = r[1] - r[3]
					}
				}
			}
		}
	}
}

// outputTransform writes each output tile Aᵀ M A (+ bias) of channels
// o0 ≤ o < o1 from the products m[ξ][o][t] into out (batch, O, OH, OW).
func outputTransform(g geometry, m []float32, o0, o1 int, bias, out []float32) {
	th, tw := g.oh/2, g.ow/2
	ot := spaced(g.o * g.tiles())
	p := g.positions()
	for o := o0; o < o1; o++ {
		var b float32
		if bias != nil {
			b = bias[o]
		}
		for n := range g.n {
			plane := out[(n*g.o+o)*p:][:p]
			src := m[o*g.tiles()+n*th*tw:]
			for ty := range th {
				for tx := range tw {
					at := ty*tw + tx
					// tmp = Aᵀ M (2×4), by columns.
					var tmp [2][4]float32
					for j := range 4 {
						m0, m1, m2, m3 := src[(0+j)*ot+at], src[(4+j)*ot+at], src[(8+j)*ot+at], src[(12+j)*ot+at]
						tmp[0][j] = m0 + m1 + m2
						tmp[1][j] = m1 - m2 - m3
					}
					for i := range 2 {
						r := &tmp[i]
						row := plane[(2*ty+i)*g.ow+2*tx:][:2]
						row[0] = r[0] + r[1] + r[2] + b
						row[1] = r[1] - r[2] - r[3] + b
					}
				}
			}
		}
	}
}

// gradTransform sets z[ξ][o][t] to (A Ȳ Aᵀ)[ξ] of the 2×2 tile Ȳ of the
// output gradient gm (O, batch·positions), for o0 ≤ o < o1: a channel
// at a time, each tile's top left entry at gradTileIndex's offset.
func gradTransform(g geometry, gm []float32, idx []int32, o0, o1 int, z []float32) {
	t, np := g.tiles(), g.n*g.positions()
	for o := o0; o < o1; o++ {
		asm.WinogradGradTiles(z[o*t:], spaced(g.o*t), gm[o*np:][:np], idx, g.ow)
	}
}

// gradTileIndex lists, for each tile t of the batch, the offset of its
// top left entry in a channel's row (batch·positions) of the output
// gradient's matrix (asm.WinogradTileIndex).
func gradTileIndex(g geometry) []int32 { return asm.WinogradTileIndex(g.n, g.oh, g.ow) }

// filterGradTransform sets dw[o][c] (3×3) to Gᵀ M G from the summed
// products m[ξ][o][c]; each filter's is its own, so a helper may take
// half of them.
func filterGradTransform(g geometry, m, dw []float32) {
	ms := spaced(g.o * g.c)
	shareRange(g.o*g.c, 16*g.o*g.c, func(lo, hi int) { asm.WinogradFilterTiles(dw[lo*9:hi*9], m[lo:], ms) })
}

// inputGradTransform sets the planes of channels c0 ≤ c < c1 of dx
// (batch, C, H, W) to the sum of B D Bᵀ over the 4×4 windows of the
// tiles, from the products d[ξ][c][t], dropping what falls in the
// padding: each channel's tiles transformed in place, then each plane's
// positions summed from the tiles whose windows cover them (foldTable).
func inputGradTransform(g geometry, d []float32, fold []int32, c0, c1 int, dx []float32) {
	t, tpi, hw := g.tiles(), g.tiles()/g.n, g.h*g.w
	ds := spaced(g.c * t)
	for c := c0; c < c1; c++ {
		asm.WinogradInputTiles(d[c*t:], ds, t)
		for n := range g.n {
			asm.WinogradFold(dx[(n*g.c+c)*hw:][:hw], d[c*t+n*tpi:], fold)
		}
	}
}

// foldTable lists, for each input position of a plane, the offsets (ξ·ds
// + the tile's index within its image) of the at most four transformed
// window entries that fall on it, in four rows of h·w entries, the tiles
// in row-major order and −1 for none: the order in which adding the
// windows one tile after another would add them.
func foldTable(g geometry) []int32 { return foldTableSpaced(g, spaced(g.c*g.tiles())) }

// foldTableSpaced is foldTable for transforms ds apart.
func foldTableSpaced(g geometry, ds int) []int32 {
	return asm.WinogradFoldTable(g.h, g.w, g.oh, g.ow, ds)
}

// spaced is the distance between the 16 matrices of a transform of n
// values each: n and one cache line more, so that a loop writing or
// reading the 16 of them a value at a time (the transforms) does not
// land on one cache set when n is a power of two, as ResNet-18's sizes
// are.
func spaced(n int) int { return n + 16 }

// winoScratch holds the products' buffers between runs: each run takes
// one for its 16 products and gives it back, so that the convolutions
// of all workers share a few buffers rather than each keeping its own.
var winoScratch struct {
	sync.Mutex
	free [][]float32
}

// takeScratch returns n float32s of a free buffer, or of a new one;
// their values are whatever the last use left.
func takeScratch(n int) []float32 {
	winoScratch.Lock()
	defer winoScratch.Unlock()
	best := -1 // the smallest that holds n
	for i, b := range winoScratch.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(winoScratch.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]float32, n)
	}
	b := winoScratch.free[best]
	last := len(winoScratch.free) - 1
	winoScratch.free[best] = winoScratch.free[last]
	winoScratch.free = winoScratch.free[:last]
	return b[:n]
}

// putScratch gives b back for another run.
func putScratch(b []float32) {
	winoScratch.Lock()
	defer winoScratch.Unlock()
	winoScratch.free = append(winoScratch.free, b)
}
