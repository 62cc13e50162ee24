package asm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWinogradRoutines checks the AVX-512 transforms against their Go
// loops, bit for bit, on random values over shapes (images of 3
// channels, h × w, 3×3 filters of padding 1) whose tile and position
// counts are and are not multiples of sixteen (the masked last vector),
// with signed zeros among the values.
func TestWinogradRoutines(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(24, 0))
	random := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			switch rng.IntN(10) {
			case 0:
				v[i] = float32(math.Copysign(0, -1))
			default:
				v[i] = float32(rng.NormFloat64())
			}
		}
		return v
	}
	for _, s := range [][3]int{{1, 2, 2}, {3, 2, 2}, {5, 4, 4}, {2, 8, 6}, {1, 10, 12}, {4, 16, 16}, {15, 2, 2}, {17, 2, 2}} {
		n, h, w := s[0], s[1], s[2]
		const c, o = 3, 2
		tiles := n * (h / 2) * (w / 2)
		same := func(what string, got, want []float32) {
			t.Helper()
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s, %d images of %d×%d: [%d] = %v, want %v", what, n, h, w, i, got[i], want[i])
				}
			}
		}
		// The output gradient's transform, one channel.
		src := random(n * h * w)
		idx := WinogradTileIndex(n, h, w)
		zs := tiles + 5
		got, want := random(16*zs), make([]float32, 16*zs)
		copy(want, got)
		winoGradTilesFloat32(got, zs, src, idx, w)
		gradTilesGo(want, zs, src, idx, w)
		same("grad tiles", got, want)
		// The input gradient's: tiles in place, then a plane's fold.
		ds := c*tiles + 16
		got = random(16 * ds)
		want = slices.Clone(got)
		winoInputTilesFloat32(got, ds, tiles)
		inputTilesGo(want, ds, tiles)
		same("input tiles", got, want)
		fold := WinogradFoldTable(h, w, h, w, ds)
		plane, wantPlane := random(h*w), make([]float32, h*w)
		tpi := tiles / n
		winoFoldFloat32(plane, got[tpi*(n-1):], fold)
		foldTilesGo(wantPlane, want[tpi*(n-1):], fold)
		same("fold", plane, wantPlane)
		// The filter gradient's, of o·c + 15 filters.
		filters := o*c + 15
		ms := filters + 3
		m := random(16 * ms)
		gotDW, wantDW := random(9*filters), make([]float32, 9*filters)
		winoFilterTilesFloat32(gotDW, m, ms)
		filterTilesGo(wantDW, m, ms)
		same("filter tiles", gotDW, wantDW)
	}
}
