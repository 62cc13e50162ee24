//go:build !purego

package engine

import "golang.org/x/sys/cpu"

// negateAVX512 makes negateInto negate float32 values sixteen at a time
// where the CPU has AVX-512: a flip of the sign bit, which is what the Go
// loop's −x is to the bit.
var negateAVX512 = cpu.X86.HasAVX512F

// negateFloat32 sets dst[i] = −src[i] for i < n and reports whether every
// src[i] is finite. n must be a multiple of 16, dst and src must hold n
// values and not overlap; it needs AVX-512 (negateAVX512).
//
//go:noescape
func negateFloat32(dst, src *float32, n int) (finite bool)
