package asm

import "github.com/mtsgd/mtsgd/internal/asm/internal/limits"

// The routines below compute a convolution's products without its patch
// matrix (models/ops' directconv.go and pooledgrad.go say when and why): the
// forward product and the filter gradient read each tap's values from
// the input itself, the input gradient adds each tap's gradient back
// into shifted planes, and a convolution whose output feeds a pool
// computes its gradients from the pool's gradient, one window of input
// per pool output. Each is a table of routines of gemm_amd64.s, one per
// size (internal/gen documents each); all need UseAVX512, which callers
// ask by ServesConvTaps and ServesConvPools.

// The sizes the routines take (internal/limits).
const (
	// MaxTapVectors is the most vectors of 16 columns ConvTapRows
	// computes for each row of filters: four output rows of up to 16, or
	// one of up to 32 in two vectors.
	MaxTapVectors = limits.TapVectors
	// MaxTapRow is the longest output row ConvTapRows, ConvTapDots and
	// ConvTapBack take: two vectors of 16.
	MaxTapRow = 2 * 16
	// MaxBackFilters is the most filters ConvTapBack takes.
	MaxBackFilters = limits.BackFilters
	// MaxPoolTaps is the widest filter ConvPoolTaps takes.
	MaxPoolTaps = limits.PoolTaps
	// ConvPoolRows and ConvPoolBack take k×k filters over channels whose
	// k·C values a window row holds fit in V vectors, with k ≤
	// MaxPoolRowsTaps and V ≤ MaxPoolRowsVectors.
	MaxPoolRowsTaps    = limits.PoolRowsTaps
	MaxPoolRowsVectors = limits.PoolRowsVectors
)

// ConvTapRows is C = w·patches for m rows of filters w (ldw apart) over
// the output positions of one block of output rows, read from the input
// x rather than from patches: for each row r of filters and each of v
// vectors of 16 positions (masked by the 16 bits of masks from bit 16·v),
// C[r, v, j] = Σ_t w[r, t]·x[offs[t] + v·stepX + j] over the k taps t in
// order, offs[t] a tap's byte offset from the first input of the first
// vector's output row; vector v's outputs lie stepC bytes after the one
// before it in each row of C (ldc apart). Each entry is one chain of
// fused multiply-adds over the taps in order, as GemmRows makes it from
// the patches. v ≤ MaxTapVectors.
func ConvTapRows(v, m int, w []float32, ldw int, x *float32, offs []int, k int, c []float32, ldc, masks, stepX, stepC int) {
	most := limits.TapRows(v)
	for i0 := 0; i0 < m; i0 += most {
		tapRowsRoutines[v][min(most, m-i0)](&w[i0*ldw], ldw, x, &offs[0], k, &c[i0*ldc], ldc, masks, stepX, stepC)
	}
}

// ConvTapDots adds a tile (shape, five rows by five taps at most) of a
// convolution's filter gradient, read from its input x rather than from
// patches, into sixteen lanes per entry: for the tile's rows r of the
// output gradient gm (ldg apart; v vectors of 16 columns an output row,
// masked by the 16 bits of masks from bit 16·v, v ≤ 2) and its taps s
// (byte offsets offs[s] from an output row's first input), over images
// × rows output rows, part[r][s][l] += Σ gm[r, j]·x[offs[s] + j] over the
// columns j ≡ l (mod 16) of each output row; part's rows are ldp entries
// of 16 apart. From one output row to the next gm moves rowG bytes and x
// rowX; from an image's last output row to the next image's first, x
// moves imageX bytes more and gm imageG. Each lane is one chain of fused
// multiply-adds, output row by output row. An "output row" is whatever
// the caller steps over: an image's positions laid end to end may be
// walked sixteen at a time.
func ConvTapDots(v int, shape Tile, gm *float32, ldg int, x *float32, offs *int, part *float32, ldp, images, rows, rowG, rowX, imageX, imageG, masks int) {
	tapDotsRoutines[v][shape](gm, ldg, x, offs, part, ldp, images, rows, rowG, rowX, imageX, imageG, masks)
}

// ConvTapBack adds the taps' gradients of one vector of 16 output
// positions (masked by mask) of filters filters' output gradients grad
// (rows of ldg values) into shifted planes: for each tap t of taps (the
// rows of wt, filters values each: the filters' values at that tap), the
// tap's gradient Σ_f wt[t, f]·grad[f], one chain of fused multiply-adds
// over f in order, added into dxs at byte offset offs[t]. Eight taps at
// a time, then one: no two of eight may add into the same values (a
// masked store does not forward to a load right after it). filters ≤
// MaxBackFilters.
func ConvTapBack(filters int, grad *float32, ldg int, wt *float32, taps int, offs *int, dxs *float32, mask int) {
	tapBackRoutines[filters](grad, ldg, wt, taps, offs, dxs, mask)
}

// ConvPoolTapsRows is the most rows ConvPoolTaps of k×k filters takes at
// once: three for k ≤ 9, else two.
func ConvPoolTapsRows(k int) int { return limits.PoolTapsRows(k) }

// ConvPoolTaps adds the filter gradients of a one-channel convolution
// with k×k filters (k ≤ MaxPoolTaps) whose output feeds a pool into dw,
// from the pool's gradients rather than the convolution's: for rows ≤
// ConvPoolTapsRows(k) rows r of values v (ldv bytes apart) sharing one
// row of argmaxes arg (the convolution's output positions, int32s held
// as float32 bits), for each of images images and each of its entries e,
// v[r, e] times the k×k window of x at the input offset of arg[e]: a +
// ⌊a/ow⌋·skip, skip = w − ow, the quotient ⌊a·divOW/2³²⌋ (divOW =
// ⌈2³²/ow⌉, exact for an image's positions below 2¹⁶), summed into dw's
// row r (k rows of k taps, lddw bytes apart, which the caller clears).
// An image's input is imageX bytes after the last's, a window's rows
// rowX apart. Each tap's sum for an image is one chain of fused
// multiply-adds over its entries in order, then added into dw, image by
// image: a row's bits do not depend on how many rows are taken with it.
func ConvPoolTaps(k, rows int, v *float32, ldv int, arg *float32, entries, images int, x *float32, imageX, rowX int, dw *float32, lddw, divOW, skip int) {
	poolTapsRoutines[k][rows](v, ldv, arg, entries, images, x, imageX, rowX, dw, lddw, divOW, skip)
}

// ConvPoolRows sets dw to the filter gradient of a convolution over C
// channels with k×k filters whose output feeds a pool, from the pool's
// gradient, its input laid out rows × columns × channels (cBytes per
// position): for each of images images and each of its entries e, v[e]
// times the window at arg[e] (the output position, an int32 held as
// float32 bits; see ConvPoolTaps for divOW and skip), whose row ky is
// k·C values in a row, read as vectors vectors of 16; dw is k rows of
// 16·vectors values, the lanes past k·C meaningless. Each sum is one
// chain of fused multiply-adds over the images' entries in order.
// k ≤ MaxPoolRowsTaps, vectors ≤ MaxPoolRowsVectors.
func ConvPoolRows(k, vectors int, v *float32, arg *float32, entries, images int, x *float32, imageX, rowX int, dw *float32, divOW, skip, cBytes int) {
	poolRowsRoutines[k][vectors](v, arg, entries, images, x, imageX, rowX, dw, divOW, skip, cBytes)
}

// ConvPoolBack adds the input gradient of ConvPoolRows' convolution for
// one filter and one image into dx: for each entry e, v[e] times the
// filter's values w (k rows of vectors vectors, laid out as the window:
// k·C values then zeros) added into the window of dx at arg[e], laid out
// rows × columns × channels like the input. Whole vectors are read and
// written: the lanes past k·C add v[e]·0, and dx must reach 16·vectors
// values past its last window row.
func ConvPoolBack(k, vectors int, v *float32, arg *float32, entries int, w *float32, dx *float32, rowX, divOW, skip, cBytes int) {
	poolBackRoutines[k][vectors](v, arg, entries, w, dx, rowX, divOW, skip, cBytes)
}
