package engine

import (
	"math"
	"testing"

	"gorgonia.org/tensor"
)

// negatedFloats writes −v into float64 and float32 vectors and says
// whether v is finite, for float32 and float64 values of lengths around
// its unrolled loop's 4, with a NaN or an Inf at either end or nowhere.
// The values are float32 numbers, so every conversion is exact.
func TestNegatedFloats(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 9} {
		for _, bad := range []float64{0, math.NaN(), math.Inf(1), math.Inf(-1)} {
			for _, at := range []int{0, n - 1} {
				want := make([]float64, n)
				for i := range want {
					want[i] = float64(i) - 2.5
				}
				if bad != 0 {
					want[at] = bad
				}
				for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
					var v *tensor.Dense
					if dt == tensor.Float32 {
						f := make([]float32, n)
						for i, x := range want {
							f[i] = float32(x)
						}
						v = tensor.New(tensor.WithBacking(f))
					} else {
						v = tensor.New(tensor.WithBacking(append([]float64(nil), want...)))
					}
					checkNegated(t, v, want, make([]float64, n))
					checkNegated(t, v, want, make([]float32, n))
				}
			}
		}
	}
}

func checkNegated[D float](t *testing.T, v *tensor.Dense, want []float64, dst []D) {
	t.Helper()
	finite, err := negatedFloats(v, dst)
	if err != nil {
		t.Fatal(err)
	}
	allFinite := true
	for _, x := range want {
		allFinite = allFinite && !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	if finite != allFinite {
		t.Errorf("%v into %T: %v: finite %v", v.Dtype(), dst, want, finite)
	}
	for i, x := range want {
		if got := float64(dst[i]); got != -x && !(math.IsNaN(got) && math.IsNaN(x)) {
			t.Errorf("%v into %T: dst[%d] = %v, want %v", v.Dtype(), dst, i, got, -x)
		}
	}
}
