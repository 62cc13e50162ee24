package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWidenScaled checks WidenScaled, in AVX-512 and in Go, against a
// plain loop (package particles' copyScaled), bit for bit, over lengths
// around the sixteen values of a vector step, factors 0 (none), 1, −1 and an odd one, and
// signed zeros; and that it reports a NaN or an Inf wherever it lies,
// including a finite score that the factor makes infinite.
func TestWidenScaled(t *testing.T) {
	have := avx512
	defer func(on bool) { WidenAVX512 = on }(WidenAVX512)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, vec := range []bool{false, true} {
		if vec && !have {
			t.Log("no AVX-512 here: the Go loop only")
			continue
		}
		WidenAVX512 = vec
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 2048} {
			x := make([]float32, n)
			for i := range x {
				if rng.IntN(8) == 0 {
					x[i] = float32(math.Copysign(0, -1))
				} else {
					x[i] = float32(rng.NormFloat64() * 1e3)
				}
			}
			for _, f := range []float64{0, 1, -1, 0.3183098861837907} {
				got, want := make([]float64, n), make([]float64, n)
				if !WidenScaled(got, x, f) {
					t.Fatalf("vector %v, n %d, f %v: finite scores reported not finite", vec, n, f)
				}
				for i, v := range x {
					want[i] = float64(v) // no factor: as it is
					if f != 0 {
						want[i] = float64(v) * f
					}
				}
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("vector %v, n %d, f %v: [%d] = %v, want %v", vec, n, f, i, got[i], want[i])
					}
				}
			}
			for i := 0; i < n; i += max(1, n/7) {
				for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
					y := append([]float32(nil), x...)
					y[i] = bad
					if WidenScaled(make([]float64, n), y, 2) {
						t.Fatalf("vector %v, n %d: %v at %d not reported", vec, n, bad, i)
					}
				}
				y := append([]float32(nil), x...)
				y[i] = math.MaxFloat32
				if WidenScaled(make([]float64, n), y, math.MaxFloat64) {
					t.Fatalf("vector %v, n %d: a score made infinite by the factor at %d not reported", vec, n, i)
				}
			}
		}
	}
}
