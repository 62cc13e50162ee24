//go:build !purego

package optim

import "golang.org/x/sys/cpu"

// adamAVX512 makes Adam's Step update eight coordinates at a time where
// the CPU has AVX-512: the same operations in the same order as the Go
// loop, each rounded alike (IEEE's products, quotients, sums and square
// roots), so the same bits.
var adamAVX512 = cpu.X86.HasAVX512F

// adamFloat64 is Adam's loop over x[:n], grad, m and v with the constants
// k. n must be a multiple of 8 and the slices must hold n values; it needs
// AVX-512 (adamAVX512).
//
//go:noescape
func adamFloat64(x, grad, m, v *float64, n int, k *adamConsts)
