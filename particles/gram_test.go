package particles

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// TestGramScores32 checks the Gram matrices read from float32 scores
// where they lie (asm.GramScores32) against asm.Gram on the rows packBlock
// copies, bit for bit: K·M rows that do and do not fill the four-row
// tiles, blocks with and without a tail of columns, with and without the
// positions, and factors 0 (none), 1 and 250 (the multiplications in
// the kernels' second loop). A NaN or an Inf in a score, or a factor
// that makes one overflow, is reported.
func TestGramScores32(t *testing.T) {
	if !asm.GramAVX512 {
		t.Skip("no AVX-512 here: gramProducts takes the BLAS's Dsyrk")
	}
	for _, c := range []struct{ m, k, lo, hi int }{
		{5, 10, 0, blockSize}, {3, 2, 8, 8 + 13}, {2, 2, 5, 5 + 1000}, {1, 1, 0, 7},
	} {
		_, e := float32Ensemble(rand.New(rand.NewPCG(17, uint64(c.k))), c.m, c.k, c.hi+3)
		for _, f := range []float64{0, 1, 250} {
			for _, theta := range []bool{false, true} {
				e.Factor = f
				km := c.k * c.m
				n := km
				var positions [][]float64
				if theta {
					n += c.m
					positions = e.Theta
				}
				got, want := make([]float64, n*n), make([]float64, n*n)
				if !asm.GramScores32(e.Scores32, positions, c.lo, c.hi, f, got, n) {
					t.Fatalf("%+v, f %v: finite scores reported not finite", c, f)
				}
				var buf blockBuffers
				x, _ := packBlock(&buf, e, c.lo, c.hi, theta, true)
				asm.Gram(x[:(n+3)/4*4*(c.hi-c.lo)], n, c.hi-c.lo, want)
				for i := range n {
					for j := i; j < n; j++ {
						if i >= km && j >= km {
							continue // the positions' own: not set
						}
						if math.Float64bits(got[i*n+j]) != math.Float64bits(want[i*n+j]) {
							t.Fatalf("%+v, f %v, positions %v: g[%d][%d] = %v read in place, %v packed", c, f, theta, i, j, got[i*n+j], want[i*n+j])
						}
					}
				}
			}
		}
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1)), math.MaxFloat32} {
			s := e.Scores32[c.k-1][c.m-1]
			saved := s[c.hi-1]
			s[c.hi-1] = bad
			f := 1.0
			if bad == math.MaxFloat32 {
				f = math.MaxFloat64
			}
			if asm.GramScores32(e.Scores32, nil, c.lo, c.hi, f, make([]float64, c.k*c.m*c.k*c.m), c.k*c.m) {
				t.Fatalf("%+v: %v times %v not reported", c, bad, f)
			}
			s[c.hi-1] = saved
		}
	}
}
