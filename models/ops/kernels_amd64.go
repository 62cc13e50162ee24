//go:build !purego

package ops

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/genkernels -o kernels_amd64.s

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

//go:noescape
func gemmTapRows1(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows2(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows3(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows4(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows5(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows6(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows7(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows8(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows9(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

//go:noescape
func gemmTapRows10(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int)

// tapRowsKernels[r] computes r rows.
var tapRowsKernels = [...]func(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks int){
	nil, gemmTapRows1, gemmTapRows2, gemmTapRows3, gemmTapRows4, gemmTapRows5,
	gemmTapRows6, gemmTapRows7, gemmTapRows8, gemmTapRows9, gemmTapRows10,
}

//go:noescape
func gemmTapDots4x5(gm *float32, ldg int, x *float32, offs *int, part *float32, ldp, images, rows, rowG, rowX, imageX, masks int)

//go:noescape
func gemmTapDots4x1(gm *float32, ldg int, x *float32, offs *int, part *float32, ldp, images, rows, rowG, rowX, imageX, masks int)

//go:noescape
func gemmTapDots1x5(gm *float32, ldg int, x *float32, offs *int, part *float32, ldp, images, rows, rowG, rowX, imageX, masks int)

//go:noescape
func gemmTapDots1x1(gm *float32, ldg int, x *float32, offs *int, part *float32, ldp, images, rows, rowG, rowX, imageX, masks int)
