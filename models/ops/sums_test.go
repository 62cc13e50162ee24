package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sums against one float64 accumulator in order: within 1e-13 of the
// row's absolute sum in float64 (four partial sums reorder additions of
// at most a few thousand terms); in float32 the same value, the
// float64 sums being rounded to float32 either way, on rows of lengths
// around the unrolling (0 to 9) and LeNet's (784·256).
func TestSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(50, 0))
	for _, cols := range []int{0, 1, 3, 4, 5, 8, 9, 100, 784 * 256} {
		const rows = 3
		m64 := make([]float64, rows*cols)
		m32 := make([]float32, rows*cols)
		for i := range m64 {
			m32[i] = float32(rng.NormFloat64())
			m64[i] = float64(m32[i])
		}
		got64, got32 := make([]float64, rows), make([]float32, rows)
		sums(m64, rows, cols, false, got64)
		sums(m32, rows, cols, false, got32)
		for r := range rows {
			var want, abs float64
			for _, v := range m64[r*cols : (r+1)*cols] {
				want += v
				abs += math.Abs(v)
			}
			if math.Abs(got64[r]-want) > 1e-13*abs {
				t.Errorf("%d columns, row %d: float64 sum %.17g, want %.17g", cols, r, got64[r], want)
			}
			if got32[r] != float32(want) {
				t.Errorf("%d columns, row %d: float32 sum %.9g, want %.9g", cols, r, got32[r], float32(want))
			}
		}
	}
}
