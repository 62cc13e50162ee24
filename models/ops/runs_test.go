package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddRunsFloat32 checks the assembly loop against the Go one bit for
// bit: runs of every length from 0 to 21 (the quads and the single
// remainder), overlapping runs in the plane (as a plane's taps are),
// and values with signed zeros, infinities and NaNs.
func TestAddRunsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const size = 64
	for trial := range 200 {
		src := make([]float32, size)
		for i := range src {
			src[i] = specialFloat32(rng)
			if rng.IntN(2) == 0 {
				src[i] = float32(rng.NormFloat64())
			}
		}
		want := make([]float32, size)
		for i := range want {
			want[i] = float32(rng.NormFloat64())
		}
		got := append([]float32(nil), want...)
		var runs []tapRun
		for range rng.IntN(6) {
			n := rng.IntN(22)
			runs = append(runs, tapRun{pos: int32(rng.IntN(size - n + 1)), at: int32(rng.IntN(size - n + 1)), n: int32(n)})
		}
		addRunsGo(want, src, runs)
		addRunsFloat32(got, src, runs)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d, runs %v, entry %d: %v (bits %#x), want %v (bits %#x)", trial, runs, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
}

// TestCopyRunsFloat32 checks the assembly copy of runs against copy, bit
// for bit (NaN payloads included), on runs of every length from 0 to 21.
func TestCopyRunsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	const size = 64
	for trial := range 200 {
		plane := make([]float32, size)
		for i := range plane {
			plane[i] = math.Float32frombits(rng.Uint32())
		}
		want := make([]float32, size)
		var runs []tapRun
		for range rng.IntN(6) {
			n := rng.IntN(22)
			runs = append(runs, tapRun{pos: int32(rng.IntN(size - n + 1)), at: int32(rng.IntN(size - n + 1)), n: int32(n)})
		}
		for _, r := range runs {
			copy(want[r.pos:r.pos+r.n], plane[r.at:r.at+r.n])
		}
		got := make([]float32, size)
		copyRunsFloat32(got, plane, runs)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("trial %d, runs %v, entry %d: bits %#x, want %#x", trial, runs, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}
