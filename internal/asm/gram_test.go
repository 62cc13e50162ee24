package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGramLanes checks gramLanesFloat64 against its Go twin bit for bit,
// and Gram against each entry's inner product in float64 summed
// exactly (math/big is not needed: the rows are small integers times a
// power of two, so every sum is exact), over row counts that do and do
// not fill the four-row tiles and widths with and without a tail.
func TestGramLanes(t *testing.T) {
	if !GramAVX512 {
		t.Skip("no AVX-512 here")
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
			Gram(rows, n, w, g)
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
	if !GramAVX512 {
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

// gramLanesGo is gramLanesFloat64 in Go, for the tests: the same fused
// multiply-adds in the same order.
func gramLanesGo(a, b []float64, ld, w int, lanes *[128]float64) {
	clear(lanes[:])
	for i := range 4 {
		for j := range 4 {
			l := lanes[(4*i+j)*8:][:8]
			ra, rb := a[i*ld:][:w], b[j*ld:][:w]
			for c := range w {
				l[c%8] = math.FMA(ra[c], rb[c], l[c%8])
			}
		}
	}
}
