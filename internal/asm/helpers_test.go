package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// needAVX512 skips a test of an AVX-512 routine on a processor without
// AVX-512 or a build without the assembly.
func needAVX512(t *testing.T) {
	t.Helper()
	if !avx512 {
		t.Skip("no AVX-512 here")
	}
}

// sumBound is γ_n = n·u/(1 − n·u), u the float32 unit roundoff: the
// relative bound on the error of a float32 sum of n terms in any order
// (Higham, Accuracy and Stability of Numerical Algorithms, §3.1), times
// the sum of their magnitudes.
func sumBound(n int) float64 {
	const u = 1.0 / (1 << 24)
	return float64(n) * u / (1 - float64(n)*u)
}

// randomMatrix is rows × ld values in [−1, 1).
func randomMatrix(rng *rand.Rand, rows, ld int) []float32 {
	v := make([]float32, rows*ld)
	for i := range v {
		v[i] = 2*rng.Float32() - 1
	}
	return v
}

// specialFloat32 draws a value that exercises the 2×2 pools' comparisons:
// ties (few distinct values), ±0, negatives, ±Inf and NaN.
func specialFloat32(rng *rand.Rand) float32 {
	switch rng.IntN(12) {
	case 0:
		return float32(math.Copysign(0, -1))
	case 1:
		return 0
	case 2:
		return float32(math.Inf(1))
	case 3:
		return float32(math.Inf(-1))
	case 4:
		return float32(math.NaN())
	case 5:
		return -float32(math.NaN())
	default:
		return float32(rng.IntN(7)-3) / 2 // ties
	}
}

// wideFloat32s is n values spread over 40 binades and, in every fifth
// trial, now and then an infinity or a NaN.
func wideFloat32s(rng *rand.Rand, n, trial int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
		if trial%5 == 4 && rng.IntN(50) == 0 {
			v[i] = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}[rng.IntN(3)]
		}
	}
	return v
}
