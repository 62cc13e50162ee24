//go:build !purego

package particles

import "golang.org/x/sys/cpu"

// gramAVX512 makes gramProducts take each block's Gram matrix in
// gramLanesFloat64 where the CPU has AVX-512, rather than in the BLAS
// (see gramBlock).
var gramAVX512 = cpu.X86.HasAVX512F

// gramLanesFloat64 sets lanes[(4i+j)·8 + l] to the sum, in column order,
// of a_i[c]·b_j[c] over the columns c < w with c ≡ l (mod 8), each term
// added by a fused multiply-add, for the four rows a_i (a, then ld
// values apart) and the four rows b_j (from b). w must be a multiple of
// 8; it needs AVX-512 (gramAVX512).
//
//go:noescape
func gramLanesFloat64(a, b *float64, ld, w int, lanes *[128]float64)

// gramLanes32x32 is gramLanesFloat64 for the float32 rows *a[i] and
// *b[j], each value x read as float64(x)·f: the rows widenScaled would
// have written.
//
//go:noescape
func gramLanes32x32(a, b *[4]*float32, w int, f float64, lanes *[128]float64)

// gramLanes32x64 is gramLanes32x32 with float64 rows *b[j], read as they
// are.
//
//go:noescape
func gramLanes32x64(a *[4]*float32, b *[4]*float64, w int, f float64, lanes *[128]float64)
