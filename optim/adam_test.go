package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamWidths checks Adam's step eight coordinates at a time
// (AVX-512) against its Go loop, bit for bit, parameters and state, over
// five steps of random gradients (zeros and wide magnitudes among them)
// on a length that leaves a tail of five for the Go loop.
func TestAdamWidths(t *testing.T) {
	if !adamAVX512 {
		t.Skip("no AVX-512 here: Step runs the Go loop only")
	}
	defer func() { adamAVX512 = true }()
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 8*37 + 5
	x := make([][]float64, 2)
	for i := range x {
		x[i] = make([]float64, n)
	}
	for j := range n {
		x[0][j] = rng.NormFloat64()
		x[1][j] = x[0][j]
	}
	opts := []*Adam{NewAdam(3e-3), NewAdam(3e-3)}
	for step := range 5 {
		grad := make([]float64, n)
		for j := range grad {
			if rng.IntN(9) > 0 {
				grad[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(13)-6))
			}
		}
		for i, o := range opts {
			adamAVX512 = i == 1
			if err := o.Step(x[i], grad); err != nil {
				t.Fatal(err)
			}
		}
		for j := range n {
			if math.Float64bits(x[0][j]) != math.Float64bits(x[1][j]) {
				t.Fatalf("step %d: x[%d] = %v eight at a time, %v in Go", step, j, x[1][j], x[0][j])
			}
		}
		s0, s1 := opts[0].State(), opts[1].State()
		for j := range s0 {
			if math.Float64bits(s0[j]) != math.Float64bits(s1[j]) {
				t.Fatalf("step %d: state[%d] = %v eight at a time, %v in Go", step, j, s1[j], s0[j])
			}
		}
	}
}
