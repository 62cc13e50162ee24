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
// smallest subnormal, the largest finite value and random values, in y and in g.
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
	const n = 4096
	y, g, got := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range y {
		y[i], g[i] = special(), special()
	}
	reluBackward(y, g, got)
	for i, v := range y {
		var want float32
		if v > 0 {
			want = g[i]
		}
		if math.Float32bits(got[i]) != math.Float32bits(want) {
			t.Fatalf("y %v, g %v: gradient bits %#x, want %#x", v, g[i], math.Float32bits(got[i]), math.Float32bits(want))
		}
	}
}
