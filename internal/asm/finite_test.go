package asm

import (
	"math"
	"testing"
)

// TestAllFinite checks AllFinite against math.IsNaN and math.IsInf, value
// by value, in both precisions, with each non-finite value at every
// place of slices around the four-value step (the body and the tail),
// among signed zeros, subnormals and the largest finite values, whose
// products by 0 are ±0.
func TestAllFinite(t *testing.T) {
	finite := []float64{0, math.Copysign(0, -1), 1, -2.5, 5e-324, math.MaxFloat32, -math.MaxFloat64}
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for n := range 10 {
		v := make([]float64, n)
		for i := range v {
			v[i] = finite[i%len(finite)]
		}
		if !AllFinite(v) || !AllFinite(float32s(v)) {
			t.Fatalf("n %d: finite values reported not finite", n)
		}
		for i := range v {
			for _, b := range bad {
				w := append([]float64(nil), v...)
				w[i] = b
				if AllFinite(w) || AllFinite(float32s(w)) {
					t.Fatalf("n %d: %v at %d not reported", n, b, i)
				}
			}
		}
	}
}

// float32s is v rounded to float32, a finite value too large for it
// taken to the largest float32 of its sign rather than to an infinity.
func float32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
		if math.IsInf(float64(out[i]), 0) && !math.IsInf(x, 0) {
			out[i] = float32(math.Copysign(math.MaxFloat32, x))
		}
	}
	return out
}
