//go:build !purego

package ops

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/genkernels -o kernels_amd64.s -go taps_amd64.go

// useAVX512 runs LeNet's thin float32 products in kernels.go's kernels.
var useAVX512 = cpu.X86.HasAVX512F

// The kernels of kernels_amd64.s (see internal/genkernels). gemmRowsR
// computes R rows of C = A·B (+ C with addC) over n columns; gemmDotsRAxRB
// adds the sixteen lanes of the sums over k positions of RA rows of A
// times RB rows of B into part, ldp entries of 16 a row.

//go:noescape
func gemmRows1(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)

//go:noescape
func gemmRows2(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)

//go:noescape
func gemmRows3(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)

//go:noescape
func gemmRows4(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)

//go:noescape
func gemmRows5(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)

//go:noescape
func gemmDots4x5(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int)

//go:noescape
func gemmDots4x1(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int)

//go:noescape
func gemmDots1x5(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int)

//go:noescape
func gemmDots1x1(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int)

// rowsKernels[r] computes r rows.
var rowsKernels = [...]func(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool){
	nil, gemmRows1, gemmRows2, gemmRows3, gemmRows4, gemmRows5,
}
