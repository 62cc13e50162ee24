//go:build !purego

package ops

// reluGradFloat32 sets dx[i] to grad[i] where y[i] > 0 and to +0 elsewhere
// (NaNs included), for i < n, sixteen at a time: the same bits as
// reluBackwardFloat32's Go loop. n must be a multiple of 16 and the
// slices must hold n values; it needs AVX-512 (useAVX512).
//
//go:noescape
func reluGradFloat32(y, grad, dx *float32, n int)
