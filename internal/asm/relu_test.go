package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReLUGradFloat32 checks the branch-free float32 gradient against
// ReLU's gradient as defined (g where y > 0, else +0) bit for bit: signed
// zeros, infinities, NaNs of either sign and the one next to +Inf, the
// smallest subnormal, the largest finite value and random values, in y and in g;
// with AVX-512 sixteen at a time and in Go, over a length that leaves a
// tail of seven for the Go loop.
func TestReLUGradFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	special := func() float32 {
		switch rng.IntN(6) {
		case 0:
			return math.Float32frombits(1) // the smallest positive subnormal
		case 1:
			return -math.Float32frombits(1)
		case 3:
			return math.Float32frombits(0x7f800001) // the NaN next to +Inf
		case 4:
			return math.Float32frombits(0x7f7fffff) // the largest finite
		case 2:
			return float32(rng.NormFloat64())
		default:
			return specialFloat32(rng)
		}
	}
	have := avx512
	defer func(on bool) { UseAVX512 = on }(UseAVX512)
	const n = 4096 + 7
	y, g := make([]float32, n), make([]float32, n)
	for i := range y {
		y[i], g[i] = special(), special()
	}
	for _, wide := range []bool{false, true} {
		if wide && !have {
			continue
		}
		UseAVX512 = wide
		got := make([]float32, n)
		for i := range got {
			got[i] = float32(math.NaN()) // every value must be written
		}
		ReLUGradFloat32(y, g, got)
		for i, v := range y {
			var want float32
			if v > 0 {
				want = g[i]
			}
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("AVX-512 %v: y %v, g %v: gradient bits %#x, want %#x", wide, v, g[i], math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
	}
}
