package asm

import "sync"

//go:generate go run ./internal/gen

// Float is the element types of the Go forms.
type Float interface{ ~float32 | ~float64 }

// Some of LeNet's float32 products are too thin for the BLAS: conv1's
// forward product is 10 to 30 rows (filters, stacked across particles)
// by 81 taps by 200,704 positions, and its filter gradient 40 to 60 rows
// by 81 taps summed over 100,352 positions a half. OpenBLAS 0.3.21 packs
// the whole patch matrix for them and ran them at 35-50 GFLOP/s a core
// on an AVX-512 Xeon whose large products run at 150
// (docs/performance-log-2026-11-26.md, "Own kernels for LeNet's thin
// products"). With AVX-512 such products run in routines of
// gemm_amd64.s that read the matrices where they lie:
//
//   - GemmRows, C = A·B for few rows and short sums: each entry of C is
//     one chain of fused multiply-adds over k in order;
//   - GemmDots, C = A·Bᵀ for long sums over positions and few entries:
//     each entry is sixteen such chains (positions ≡ l mod 16), added in a
//     fixed tree.
//
// Either way an entry's value depends on its own row of A and column (or
// row) of B alone, not on how many rows are computed beside it or where a
// caller cuts the product: stacking particles or tasks, and helping,
// leave every bit as it is (TestGemmIndependentOfTiles). Which products
// take them is the caller's choice (models/ops' gemm.go); both need
// UseAVX512.

// rowsCols is how many columns of C GemmRows computes for all of its
// rows before moving on: the rows of B they span (81 taps × 2 KB for
// conv1) stay in the core's cache while every five rows of C read them.
const rowsCols = 512

// GemmRows is C = A·B (+ C with addC), A m×k, B k×n, row-major, five rows
// of C at a time (gemmRowsR). It needs UseAVX512: callers ask
// ServesThinProducts.
func GemmRows(m, n, k int, a []float32, lda int, b []float32, ldb int, addC bool, c []float32, ldc int) {
	for j0 := 0; j0 < n; j0 += rowsCols {
		w := min(rowsCols, n-j0)
		for i0 := 0; i0 < m; i0 += 5 {
			rowsRoutines[min(5, m-i0)](&a[i0*lda], lda, &b[j0], ldb, &c[i0*ldc+j0], ldc, k, w, addC)
		}
	}
}

// dotsSpan is how many positions GemmDots sums over for every entry
// before moving on: a span of every row of A and B (60 + 81 rows × 4 KB
// for conv1's filter gradient) stays in the core's cache.
const dotsSpan = 1024

// GemmDots is C = A·Bᵀ + beta·C, A m×k, B n×k, row-major, in tiles of
// four rows of A by five of B (gemmDotsRAxRB). It needs UseAVX512:
// callers ask ServesThinProducts.
func GemmDots(m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	buf, part := LaneSums(m * n)
	defer PutLaneSums(buf)
	for p0 := 0; p0 < k; p0 += dotsSpan {
		span := min(dotsSpan, k-p0)
		ForTiles(m, n, 4, 5, func(shape Tile, i, j int) {
			dotsRoutines[shape](&a[i*lda+p0], lda, &b[j*ldb+p0], ldb, &part[(i*n+j)*16], n, span)
		})
	}
	SumLanes(part, m, n, beta, c, ldc)
}

// laneParts holds the sixteen partial sums per entry of GemmDots and of
// the tap dots routines (ConvTapDots).
var laneParts = sync.Pool{New: func() any { return new([]float32) }}

// LaneSums returns sixteen partial sums, cleared, for each of entries
// entries of a product; buf goes back with PutLaneSums after.
func LaneSums(entries int) (buf *[]float32, part []float32) {
	buf = laneParts.Get().(*[]float32)
	if cap(*buf) < entries*16 {
		*buf = make([]float32, entries*16)
	}
	part = (*buf)[:entries*16]
	clear(part)
	return buf, part
}

// PutLaneSums gives back the partial sums of LaneSums.
func PutLaneSums(buf *[]float32) { laneParts.Put(buf) }

// Tile is the tile a dots routine computes: a whole tile (GemmDots: four
// rows of A by five of B; ConvTapDots: five rows by five taps), or the
// one row or one column of a tile that the rows or columns left over do
// not fill.
type Tile int

const (
	TileWhole  Tile = iota // ra × rb
	TileColumn             // ra × 1
	TileRow                // 1 × rb
	TileOne                // 1 × 1
)

// ForTiles calls run(shape, i, j) for the tiles of ra rows by rb columns
// that cover m rows by n columns, from (i, j): a whole tile in one call,
// a partial one a row or a column at a time.
func ForTiles(m, n, ra, rb int, run func(shape Tile, i, j int)) {
	for i0 := 0; i0 < m; i0 += ra {
		for j0 := 0; j0 < n; j0 += rb {
			rows, cols := min(ra, m-i0), min(rb, n-j0)
			switch {
			case rows == ra && cols == rb:
				run(TileWhole, i0, j0)
			case rows == ra:
				for j := j0; j < j0+cols; j++ {
					run(TileColumn, i0, j)
				}
			case cols == rb:
				for i := i0; i < i0+rows; i++ {
					run(TileRow, i, j0)
				}
			default:
				for i := i0; i < i0+rows; i++ {
					for j := j0; j < j0+cols; j++ {
						run(TileOne, i, j)
					}
				}
			}
		}
	}
}

// SumLanes sets C (m × n) to the sums of part's sixteen lanes per entry,
// added in a fixed tree, plus beta·C.
func SumLanes(part []float32, m, n int, beta float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			p := part[(i*n+j)*16:][:16]
			var h [8]float32
			for l := range h {
				h[l] = p[l] + p[l+8]
			}
			s := ((h[0] + h[4]) + (h[2] + h[6])) + ((h[1] + h[5]) + (h[3] + h[7]))
			if beta != 0 {
				s += beta * c[i*ldc+j]
			}
			c[i*ldc+j] = s
		}
	}
}
