//go:build !purego

package particles

import "golang.org/x/sys/cpu"

// widenAVX512 makes widenScaled convert sixteen float32 scores a step
// where the CPU has AVX-512. The product float64(x)·f is IEEE's, rounded
// the same in a vector lane as in the Go loop, so the results are the same
// to the bit; the tests run both.
var widenAVX512 = cpu.X86.HasAVX512F

// widenScaledFloat32 sets dst[i] = float64(src[i])·f for i < n and
// reports whether every dst[i] is finite. n must be a multiple of 16 and
// dst and src must hold n values; it needs AVX-512 (widenAVX512).
//
//go:noescape
func widenScaledFloat32(dst *float64, src *float32, n int, f float64) (finite bool)
