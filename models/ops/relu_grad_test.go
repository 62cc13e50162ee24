package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkReLUBackward times ReLU's gradient on a ResNet-18 layer's
// activations (batch 64, 64 channels of 16×16), half of them positive at
// random, as after a batch normalisation.
func BenchmarkReLUBackward(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 64 * 64 * 16 * 16
	y, g, dx := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range y {
		y[i], g[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for range b.N {
		reluBackward(y, g, dx)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gvalues/s")
}

// TestReLUBackwardFloat32 checks the branch-free float32 gradient against
// ReLU's gradient as defined (g where y > 0, else +0) bit for bit: signed
// zeros, infinities, NaNs of either sign and the one next to +Inf, the
// smallest subnormal, the largest finite value and random values, in y and in g;
// with AVX-512 sixteen at a time and in Go, over a length that leaves a
// tail of seven for the Go loop.
func TestReLUBackwardFloat32(t *testing.T) {
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
	have := useAVX512
	defer func() { useAVX512 = have }()
	const n = 4096 + 7
	y, g := make([]float32, n), make([]float32, n)
	for i := range y {
		y[i], g[i] = special(), special()
	}
	for _, wide := range []bool{false, true} {
		if wide && !have {
			continue
		}
		useAVX512 = wide
		got := make([]float32, n)
		for i := range got {
			got[i] = float32(math.NaN()) // every value must be written
		}
		reluBackward(y, g, got)
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
