package engine

import (
	"math"
	"testing"

	"gorgonia.org/tensor"
)

// negatedFloats writes −v as float64 and says whether v is finite, for
// float32 and float64 values of lengths around its unrolled loop's 4,
// with a NaN or an Inf at either end or nowhere.
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
					dst := make([]float64, n)
					finite, err := negatedFloats(v, dst)
					if err != nil {
						t.Fatal(err)
					}
					if finite != (bad == 0) {
						t.Errorf("%v, n %d, %v at %d: finite %v", dt, n, bad, at, finite)
					}
					for i, x := range want {
						if got := dst[i]; got != -x && !(math.IsNaN(got) && math.IsNaN(x)) {
							t.Errorf("%v, n %d: dst[%d] = %v, want %v", dt, n, i, got, -x)
						}
					}
				}
			}
		}
	}
}
