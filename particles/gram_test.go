package particles

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGramLanes checks gramLanesFloat64 against its Go twin bit for bit,
// and gramBlock against each entry's inner product in float64 summed
// exactly (math/big is not needed: the rows are small integers times a
// power of two, so every sum is exact), over row counts that do and do
// not fill the four-row tiles and widths with and without a tail.
func TestGramLanes(t *testing.T) {
	if !gramAVX512 {
		t.Skip("no AVX-512 here: gramProducts takes the BLAS's Dsyrk")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 4, 5, 55} {
		for _, w := range []int{8, 13, 2048} {
			rows := make([]float64, (n+3)/4*4*w)
			for i := range rows {
				rows[i] = float64(rng.IntN(2001)-1000) / 64
			}
			if n >= 4 {
				var got, want [128]float64
				gramLanesFloat64(&rows[0], &rows[(n-4)*w], w, w&^7, &got)
				gramLanesGo(rows, rows[(n-4)*w:], w, w&^7, &want)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("n %d, w %d: lane %d = %v, Go %v", n, w, i, got[i], want[i])
					}
				}
			}
			g := make([]float64, n*n)
			gramBlock(rows, n, w, g)
			for x := range n {
				for y := x; y < n; y++ {
					want := 0.0
					for c := range w {
						want += rows[x*w+c] * rows[y*w+c]
					}
					if g[x*n+y] != want {
						t.Fatalf("n %d, w %d: g[%d][%d] = %v, want %v", n, w, x, y, g[x*n+y], want)
					}
				}
			}
		}
	}
}

// TestGramLanesRounding checks gramLanesFloat64 on random reals against
// the Go twin bit for bit: fused multiply-adds rounding as math.FMA does.
func TestGramLanesRounding(t *testing.T) {
	if !gramAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(15, 16))
	const w = 104
	rows := make([]float64, 8*w)
	for i := range rows {
		rows[i] = rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20))
	}
	var got, want [128]float64
	gramLanesFloat64(&rows[0], &rows[4*w], w, w, &got)
	gramLanesGo(rows, rows[4*w:], w, w, &want)
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("lane %d = %v, Go %v", i, got[i], want[i])
		}
	}
}

// TestGramScores32 checks the Gram matrices read from float32 scores
// where they lie (gramScores32) against gramBlock on the rows packBlock
// copies, bit for bit: K·M rows that do and do not fill the four-row
// tiles, blocks with and without a tail of columns, with and without the
// positions, and factors 0 (none), 1 and 250 (the multiplications in
// the kernels' second loop). A NaN or an Inf in a score, or a factor
// that makes one overflow, is reported.
func TestGramScores32(t *testing.T) {
	if !gramAVX512 {
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
				if !gramScores32(e.Scores32, positions, c.lo, c.hi, f, got, n) {
					t.Fatalf("%+v, f %v: finite scores reported not finite", c, f)
				}
				var buf blockBuffers
				x, _ := packBlock(&buf, e, c.lo, c.hi, theta, true)
				gramBlock(x[:(n+3)/4*4*(c.hi-c.lo)], n, c.hi-c.lo, want)
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
			if gramScores32(e.Scores32, nil, c.lo, c.hi, f, make([]float64, c.k*c.m*c.k*c.m), c.k*c.m) {
				t.Fatalf("%+v: %v times %v not reported", c, bad, f)
			}
			s[c.hi-1] = saved
		}
	}
}
