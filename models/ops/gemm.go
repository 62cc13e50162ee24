package ops

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// Some of LeNet's float32 products are too thin for the BLAS: conv1's
// forward product is 10 to 30 rows (filters, stacked across particles)
// by 81 taps by 200,704 positions, and its filter gradient 40 to 60 rows
// by 81 taps summed over 100,352 positions a half, which OpenBLAS packs
// whole and runs at a third of its rate on large products
// (docs/performance-log-2026-11-26.md, "Own kernels for LeNet's thin
// products"). Where
// the processor has AVX-512 (asm.ServesThinProducts), such products run
// in the project's own routines, which read the matrices where they lie:
// asm.GemmRows for C = A·B with few rows and short sums, asm.GemmDots for
// C = A·Bᵀ with long sums over positions and few entries. An entry's
// value depends on its own row and column alone in either, so stacking
// particles or tasks, and helping, leave every bit as it is. Other
// products, all of ResNet-18's among them, and every product on a
// processor without AVX-512, stay with the BLAS.

// productBy is what computes a product.
type productBy int

const (
	blasProduct productBy = iota
	rowsProduct           // asm.GemmRows
	dotsProduct           // asm.GemmDots
)

// The shapes for which our routines beat OpenBLAS inside a LeNet step
// (two workers at once). conv2's filter gradient (40 × 250 over 12,800)
// and input gradient (250 × 1,000 by 20) ran faster in our routines
// alone but slower inside the step, so they stay with the BLAS.
const (
	maxRowsOfRows  = 32   // rowsProduct: rows of C
	maxSumOfRows   = 256  // rowsProduct: k
	minColsOfRows  = 64   // rowsProduct: columns of C
	minSumOfDots   = 4096 // dotsProduct: k
	maxColsOfDots  = 128  // dotsProduct: columns of C
	maxEntriesDots = 1 << 14
)

// productFor picks what computes a product C = op(A)·op(B) + beta·C of
// m×n by k, before any helper cuts it, so that both halves of a cut
// product run alike.
func productFor[T float](tA, tB blas.Transpose, m, n, k int, beta T) productBy {
	if _, ok := any(beta).(float32); !ok || !asm.ServesThinProducts() || m < 1 || n < 1 || k < 1 {
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

// gemm is C = A·B + beta·C (with op(A), op(B) as tA, tB say) for
// row-major matrices, in T's precision.
//
// Where a goroutine is helping (ShareWork), a large product runs in two row
// blocks, one of them on the helper: the same bits either way.
func gemm[T float](tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmBy(productFor(tA, tB, m, n, k, beta), tA, tB, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// gemmBy is gemm in the routine given (productBy).
func gemmBy[T float](kern productBy, tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if cut := shareCut(m, n, k); cut > 0 && shareWaiting() {
		rest := rowStart(tA, cut, lda)
		offerHalf(
			func() { gemmBy(kern, tA, tB, cut, n, k, a, lda, b, ldb, beta, c, ldc) },
			func() { gemmBy(kern, tA, tB, m-cut, n, k, a[rest:], lda, b, ldb, beta, c[cut*ldc:], ldc) },
		)
		return
	}
	switch kern {
	case rowsProduct:
		asm.GemmRows(m, n, k, any(a).([]float32), lda, any(b).([]float32), ldb, beta == 1, any(c).([]float32), ldc)
	case dotsProduct:
		asm.GemmDots(m, n, k, any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	default:
		gemmWhole(tA, tB, m, n, k, a, lda, b, ldb, beta, c, ldc)
	}
}

// rowStart is where row r of op(A) begins in A's values: a row of A, or
// with tA a column.
func rowStart(tA blas.Transpose, r, lda int) int {
	if tA == blas.Trans {
		return r
	}
	return r * lda
}

// sumOverPositions is C (m × n) = A·Bᵀ, for A (m × k) and B (n × k) with
// a long k, as a filter gradient's sum over every position of every image
// of the batch: where B is large, the sum over k's first half
// into C plus the sum over its second half, computed apart (in part) and
// added after. A helper (ShareWork) may compute either half; the sums, and so
// the bits, are the same whoever does.
func sumOverPositions[T float](m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, part *scratch[T]) {
	if n*k < minHalvedSum || k < 2*splitPositions {
		gemm(blas.NoTrans, blas.Trans, m, n, k, a, lda, b, ldb, 0, c, ldc)
		return
	}
	cut := k / 2 / splitPositions * splitPositions
	second := part.get(m * n)
	offerHalf(
		func() { gemm(blas.NoTrans, blas.Trans, m, n, cut, a, lda, b, ldb, 0, c, ldc) },
		func() { gemm(blas.NoTrans, blas.Trans, m, n, k-cut, a[cut:], lda, b[cut:], ldb, 0, second, n) },
	)
	addRows(c, ldc, second, m, n)
}

// addRows adds add (m × n, packed) into C (m × n, ldc apart): the second
// half of a sum over positions into the first.
func addRows[T float](c []T, ldc int, add []T, m, n int) {
	for i := range m {
		row, a := c[i*ldc:i*ldc+n], add[i*n:(i+1)*n]
		for j := range row {
			row[j] += a[j]
		}
	}
}

// minHalvedSum is the fewest values of B for which sumOverPositions
// halves the sum. It depends on B alone, not on A's rows, so that a
// product of many runs' output gradients stacked (StackFilterGrads,
// StackAcross) sums each run's entries as that run's own product would.
// Changing it changes bits.
const minHalvedSum = 1 << 20

// splitPositions aligns sumOverPositions' cut: 16 values, a 64-byte line
// of float32s.
const splitPositions = 16

// gemmWhole is gemm in one call of the BLAS.
func gemmWhole[T float](tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch a := any(a).(type) {
	case []float32:
		blas32.Implementation().Sgemm(tA, tB, m, n, k, 1, a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blas64.Implementation().Dgemm(tA, tB, m, n, k, 1, a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}
