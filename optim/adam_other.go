//go:build !amd64 || purego

package optim

// adamAVX512 is false here: Adam's Step runs its Go loop.
var adamAVX512 = false

func adamFloat64(x, grad, m, v *float64, n int, k *adamConsts) {
	panic("optim: adamFloat64 without AVX-512")
}
