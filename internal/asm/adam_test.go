package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamWidths checks Adam eight coordinates at a time (AVX-512)
// against its Go loop, bit for bit, parameters and moments, over five
// steps of random gradients (zeros and wide magnitudes among them), with
// package optim's defaults and bias corrections, on a length that leaves
// a tail of five for the Go loop.
func TestAdamWidths(t *testing.T) {
	if !avx512 {
		t.Skip("no AVX-512 here: Adam runs the Go loop only")
	}
	defer func(on bool) { AdamAVX512 = on }(AdamAVX512)
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 8*37 + 5
	var x, m, v [2][]float64
	for i := range x {
		x[i], m[i], v[i] = make([]float64, n), make([]float64, n), make([]float64, n)
	}
	for j := range n {
		x[0][j] = rng.NormFloat64()
		x[1][j] = x[0][j]
	}
	const beta1, beta2 = 0.9, 0.999
	for step := 1; step <= 5; step++ {
		k := AdamConsts{
			Beta1: beta1, OneMinusBeta1: 1 - beta1, Beta2: beta2, OneMinusBeta2: 1 - beta2,
			C1: 1 - math.Pow(beta1, float64(step)), C2: 1 - math.Pow(beta2, float64(step)),
			LR: 3e-3, Eps: 1e-8,
		}
		grad := make([]float64, n)
		for j := range grad {
			if rng.IntN(9) > 0 {
				grad[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(13)-6))
			}
		}
		for i := range x {
			AdamAVX512 = i == 1
			Adam(x[i], grad, m[i], v[i], &k)
		}
		for _, c := range []struct {
			name string
			s    [2][]float64
		}{{"x", x}, {"m", m}, {"v", v}} {
			for j := range n {
				if math.Float64bits(c.s[0][j]) != math.Float64bits(c.s[1][j]) {
					t.Fatalf("step %d: %s[%d] = %v eight at a time, %v in Go", step, c.name, j, c.s[1][j], c.s[0][j])
				}
			}
		}
	}
}
