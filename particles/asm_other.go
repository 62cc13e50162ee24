//go:build !amd64 || purego

// The stand-ins for the assembly of widen_amd64.s and gram_amd64.s on
// other architectures and with -tags purego: the callers take their Go
// loops (or the BLAS) instead.

package particles

// widenAVX512 is false here: widenScaled runs its Go loop.
var widenAVX512 = false

func widenScaledFloat32(dst *float64, src *float32, n int, f float64) bool {
	panic("particles: widenScaledFloat32 without AVX-512")
}

// gramAVX512 is false here: gramProducts takes its Gram matrices in the
// BLAS.
var gramAVX512 = false

func gramLanesFloat64(a, b *float64, ld, w int, lanes *[128]float64) {
	panic("particles: gramLanesFloat64 without AVX-512")
}

func gramLanes32x32(a, b *[4]*float32, w int, f float64, lanes *[128]float64) {
	panic("particles: gramLanes32x32 without AVX-512")
}

func gramLanes32x64(a *[4]*float32, b *[4]*float64, w int, f float64, lanes *[128]float64) {
	panic("particles: gramLanes32x64 without AVX-512")
}
