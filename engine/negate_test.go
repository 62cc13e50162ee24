package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNegateInto checks negateInto's float32 scores, sixteen a step with
// AVX-512, against its Go loop bit for bit (signed zeros included), over
// lengths around a vector step, and that either reports a NaN or an Inf
// wherever it lies.
func TestNegateInto(t *testing.T) {
	have := negateAVX512
	defer func() { negateAVX512 = have }()
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
		negateAVX512 = false
		want := make([]float32, n)
		if ok, err := negateInto(src, want); !ok || err != nil {
			t.Fatalf("n %d, Go loop: finite %v, %v", n, ok, err)
		}
		for i := range src {
			if math.Float32bits(want[i]) != math.Float32bits(src[i])^0x80000000 {
				t.Fatalf("n %d, Go loop: [%d] = %v for %v", n, i, want[i], src[i])
			}
		}
		for _, asm := range []bool{false, true} {
			if asm && !have {
				continue
			}
			negateAVX512 = asm
			got := make([]float32, n)
			if ok, err := negateInto(src, got); !ok || err != nil {
				t.Fatalf("n %d, asm %v: finite %v, %v", n, asm, ok, err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n %d, asm %v: [%d] = %v, want %v", n, asm, i, got[i], want[i])
				}
			}
			for i := 0; i < n; i += max(1, n/9) {
				for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
					y := append([]float32(nil), src...)
					y[i] = bad
					if ok, _ := negateInto(y, got); ok {
						t.Fatalf("n %d, asm %v: %v at %d not reported", n, asm, bad, i)
					}
				}
			}
		}
	}
}

// BenchmarkNegateInto times negateInto on a ResNet-18 trunk's 11.2 M
// float32 scores, in AVX-512 and in Go.
func BenchmarkNegateInto(b *testing.B) {
	have := negateAVX512
	defer func() { negateAVX512 = have }()
	src, dst := make([]float32, 11_200_000), make([]float32, 11_200_000)
	for i := range src {
		src[i] = float32(i%13) - 6
	}
	for _, asm := range []bool{false, true} {
		if asm && !have {
			continue
		}
		b.Run(map[bool]string{false: "go", true: "avx512"}[asm], func(b *testing.B) {
			negateAVX512 = asm
			for range b.N {
				if ok, _ := negateInto(src, dst); !ok {
					b.Fatal("not finite")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/value")
		})
	}
}

// TestFinite checks finite's index of the first NaN or Inf against a
// loop over the values, with one or two bad values anywhere in vectors of
// 0 to 11 values (the four sums' tail included), and −1 without.
func TestFinite(t *testing.T) {
	bads := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for n := range 12 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i) - 3.5
		}
		if got := finite(v); got != -1 {
			t.Fatalf("n %d, all finite: %d", n, got)
		}
		for i := range n {
			for j := i; j < n; j++ {
				for _, bad := range bads {
					w := append([]float64(nil), v...)
					w[i], w[j] = bad, bads[(i+j)%3]
					if got := finite(w); got != i {
						t.Fatalf("n %d, bad at %d and %d: %d", n, i, j, got)
					}
				}
			}
		}
	}
}
