package ops

import (
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
