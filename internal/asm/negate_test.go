package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNegate checks Negate on float32 values, sixteen a step with
// AVX-512, against its Go loop bit for bit (signed zeros included), over
// lengths around a vector step, and that either reports a NaN or an Inf
// wherever it lies.
func TestNegate(t *testing.T) {
	have := avx512
	defer func(on bool) { NegateAVX512 = on }(NegateAVX512)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 15, 16, 17, 31, 32, 33, 100, 4099} {
		src := make([]float32, n)
		for i := range src {
			if rng.IntN(8) == 0 {
				src[i] = float32(math.Copysign(0, -1))
			} else {
				src[i] = float32(rng.NormFloat64())
			}
		}
		NegateAVX512 = false
		want := make([]float32, n)
		if !Negate(want, src) {
			t.Fatalf("n %d, Go loop: not finite", n)
		}
		for i := range src {
			if math.Float32bits(want[i]) != math.Float32bits(src[i])^0x80000000 {
				t.Fatalf("n %d, Go loop: [%d] = %v for %v", n, i, want[i], src[i])
			}
		}
		for _, vec := range []bool{false, true} {
			if vec && !have {
				continue
			}
			NegateAVX512 = vec
			got := make([]float32, n)
			if !Negate(got, src) {
				t.Fatalf("n %d, vector %v: not finite", n, vec)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n %d, vector %v: [%d] = %v, want %v", n, vec, i, got[i], want[i])
				}
			}
			for i := 0; i < n; i += max(1, n/9) {
				for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
					y := append([]float32(nil), src...)
					y[i] = bad
					if Negate(got, y) {
						t.Fatalf("n %d, vector %v: %v at %d not reported", n, vec, bad, i)
					}
				}
			}
		}
	}
}

// BenchmarkNegate times Negate on a ResNet-18 trunk's 11.2 M float32
// scores, in AVX-512 and in Go.
func BenchmarkNegate(b *testing.B) {
	defer func(on bool) { NegateAVX512 = on }(NegateAVX512)
	src, dst := make([]float32, 11_200_000), make([]float32, 11_200_000)
	for i := range src {
		src[i] = float32(i%13) - 6
	}
	for _, vec := range []bool{false, true} {
		if vec && !avx512 {
			continue
		}
		b.Run(map[bool]string{false: "go", true: "avx512"}[vec], func(b *testing.B) {
			NegateAVX512 = vec
			for range b.N {
				if !Negate(dst, src) {
					b.Fatal("not finite")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/value")
		})
	}
}
