//go:build !amd64 || purego

package particles

// widenAVX512 is false here: widenScaled runs its Go loop.
var widenAVX512 = false

func widenScaledFloat32(dst *float64, src *float32, n int, f float64) bool {
	panic("particles: widenScaledFloat32 without AVX-512")
}
