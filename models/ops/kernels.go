package ops

import (
	"sync"

	"gonum.org/v1/gonum/blas"
)

// Some of LeNet's float32 products are too thin for the BLAS: conv1's
// forward product is 10 to 30 rows (filters, stacked across particles)
// by 81 taps by 200,704 positions, and its filter gradient 40 to 60 rows
// by 81 taps summed over 100,352 positions a half. OpenBLAS 0.3.21 packs
// the whole patch matrix for them and ran them at 35-50 GFLOP/s a core
// on an AVX-512 Xeon whose large products run at 150 (docs/performance.md,
// "Own kernels for LeNet's thin products"). Where the processor has
// AVX-512, such products run in kernels of our own (kernels_amd64.s,
// written by internal/genkernels) that read the matrices where they lie:
//
//   - rowsProduct, C = A·B for few rows and short sums (k ≤ 256): each
//     entry of C is one chain of fused multiply-adds over k in order;
//   - dotsProduct, C = A·Bᵀ for long sums over positions and few entries:
//     each entry is sixteen such chains (positions ≡ l mod 16), added in a
//     fixed tree.
//
// Either way an entry's value depends on its own row of A and column (or
// row) of B alone, not on how many rows are computed beside it or where a
// helper cuts the product: stacking particles or tasks, and helping,
// leave every bit as it is (TestOwnKernelsIndependentOfTiles). Other
// products, all of ResNet-18's among them, and every product on a
// processor without AVX-512, stay with the BLAS.

// productKernel is what computes a product.
type productKernel int

const (
	blasProduct productKernel = iota
	rowsProduct
	dotsProduct
)

// The shapes for which our kernels beat OpenBLAS inside a LeNet step
// (two workers at once). conv2's filter gradient (40 × 250 over 12,800)
// and input gradient (250 × 1,000 by 20) ran faster in our kernels alone
// but slower inside the step, so they stay with the BLAS.
const (
	maxRowsOfRows  = 32   // rowsProduct: rows of C
	maxSumOfRows   = 256  // rowsProduct: k
	minColsOfRows  = 64   // rowsProduct: columns of C
	minSumOfDots   = 4096 // dotsProduct: k
	maxColsOfDots  = 128  // dotsProduct: columns of C
	maxEntriesDots = 1 << 14
)

// kernelFor picks the kernel of a product C = op(A)·op(B) + beta·C of
// m×n by k, before any helper cuts it, so that both halves of a cut
// product run in the same kernel.
func kernelFor[T float](tA, tB blas.Transpose, m, n, k int, beta T) productKernel {
	if _, ok := any(beta).(float32); !ok || !useAVX512 || m < 1 || n < 1 || k < 1 {
		return blasProduct
	}
	switch {
	case tA == blas.NoTrans && tB == blas.NoTrans && m <= maxRowsOfRows && k <= maxSumOfRows && n >= minColsOfRows && (beta == 0 || beta == 1):
		return rowsProduct
	case tA == blas.NoTrans && tB == blas.Trans && k >= minSumOfDots && n <= maxColsOfDots && m*n <= maxEntriesDots:
		return dotsProduct
	}
	return blasProduct
}

// rowsCols is how many columns of C rowsProduct computes for all of its
// rows before moving on: the rows of B they span (81 taps × 2 KB for
// conv1) stay in the core's cache while every five rows of C read them.
const rowsCols = 512

// rowsGemm is C = A·B (+ C with addC), A m×k, B k×n, row-major, five rows
// of C at a time.
func rowsGemm(m, n, k int, a []float32, lda int, b []float32, ldb int, addC bool, c []float32, ldc int) {
	for j0 := 0; j0 < n; j0 += rowsCols {
		w := min(rowsCols, n-j0)
		for i0 := 0; i0 < m; i0 += 5 {
			rowsKernels[min(5, m-i0)](&a[i0*lda], lda, &b[j0], ldb, &c[i0*ldc+j0], ldc, k, w, addC)
		}
	}
}

// dotsSpan is how many positions dotsProduct sums over for every entry
// before moving on: a span of every row of A and B (60 + 81 rows × 4 KB
// for conv1's filter gradient) stays in the core's cache.
const dotsSpan = 1024

// dotsParts holds dotsProduct's sixteen partial sums per entry.
var dotsParts = sync.Pool{New: func() any { return new([]float32) }}

// dotsGemm is C = A·Bᵀ + beta·C, A m×k, B n×k, row-major, in tiles of
// four rows of A by five of B.
func dotsGemm(m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	buf, part := laneSums(m * n)
	defer dotsParts.Put(buf)
	for p0 := 0; p0 < k; p0 += dotsSpan {
		span := min(dotsSpan, k-p0)
		forTiles(m, n, 4, 5, func(shape tileShape, i, j int) {
			dotsKernels[shape](&a[i*lda+p0], lda, &b[j*ldb+p0], ldb, &part[(i*n+j)*16], n, span)
		})
	}
	sumLanes(part, m, n, beta, c, ldc)
}

// laneSums returns sixteen partial sums, cleared, for each of entries
// entries of a product, from dotsParts; buf goes back there after.
func laneSums(entries int) (buf *[]float32, part []float32) {
	buf = dotsParts.Get().(*[]float32)
	if cap(*buf) < entries*16 {
		*buf = make([]float32, entries*16)
	}
	part = (*buf)[:entries*16]
	clear(part)
	return buf, part
}

// tileShape is the tile a dots kernel computes: a whole tile (gemmDots:
// four rows of A by five of B; the tap dots kernels, taps.go: five rows
// by five taps), or the one row or one column of a tile that the rows or
// columns left over do not fill.
type tileShape int

const (
	tileWhole  tileShape = iota // ra × rb
	tileColumn                  // ra × 1
	tileRow                     // 1 × rb
	tileOne                     // 1 × 1
)

// dotsKernels compute each tileShape of four rows by five (tapDotsKernels,
// taps.go, the tiles of five by five read from a convolution's input).
var dotsKernels = [...]func(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int){gemmDots4x5, gemmDots4x1, gemmDots1x5, gemmDots1x1}

// forTiles calls run(shape, i, j) for the tiles of ra rows by rb columns
// that cover m rows by n columns, from (i, j): a whole tile in one call,
// a partial one a row or a column at a time.
func forTiles(m, n, ra, rb int, run func(shape tileShape, i, j int)) {
	for i0 := 0; i0 < m; i0 += ra {
		for j0 := 0; j0 < n; j0 += rb {
			rows, cols := min(ra, m-i0), min(rb, n-j0)
			switch {
			case rows == ra && cols == rb:
				run(tileWhole, i0, j0)
			case rows == ra:
				for j := j0; j < j0+cols; j++ {
					run(tileColumn, i0, j)
				}
			case cols == rb:
				for i := i0; i < i0+rows; i++ {
					run(tileRow, i, j0)
				}
			default:
				for i := i0; i < i0+rows; i++ {
					for j := j0; j < j0+cols; j++ {
						run(tileOne, i, j)
					}
				}
			}
		}
	}
}

// sumLanes sets C (m × n) to the sums of part's sixteen lanes per entry,
// added in a fixed tree, plus beta·C.
func sumLanes(part []float32, m, n int, beta float32, c []float32, ldc int) {
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
