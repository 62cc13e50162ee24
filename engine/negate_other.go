//go:build !amd64 || purego

package engine

// negateAVX512 is false here: negateInto runs its Go loop.
var negateAVX512 = false

func negateFloat32(dst, src *float32, n int) bool {
	panic("engine: negateFloat32 without AVX-512")
}
