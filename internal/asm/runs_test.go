package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddRunsFloat32 checks the assembly loop against the Go one bit for
// bit: runs of every length from 0 to 21 (eights, fours, pairs and a
// single value), overlapping runs in the plane (as a plane's taps are),
// and values with signed zeros, infinities and NaNs.
func TestAddRunsFloat32(t *testing.T) {
	forEachWidth(t, func(t *testing.T) {
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
			var runs []Run
			for range rng.IntN(6) {
				n := rng.IntN(22)
				runs = append(runs, Run{Pos: int32(rng.IntN(size - n + 1)), At: int32(rng.IntN(size - n + 1)), N: int32(n)})
			}
			AddRuns(want, src, runs)
			srcBefore := append([]float32(nil), src...)
			AddRunsFloat32(got, src, runs)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("trial %d, runs %v, entry %d: %v (bits %#x), want %v (bits %#x)", trial, runs, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
				if math.Float32bits(src[i]) != math.Float32bits(srcBefore[i]) {
					t.Fatalf("trial %d: src entry %d changed", trial, i)
				}
			}
		}
	})
}

// TestCopyRunsFloat32 checks the assembly copy of runs against copy, bit
// for bit (NaN payloads included), on runs of every length from 0 to 21.
func TestCopyRunsFloat32(t *testing.T) {
	forEachWidth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(33, 34))
		const size = 64
		for trial := range 200 {
			plane := make([]float32, size)
			for i := range plane {
				plane[i] = math.Float32frombits(rng.Uint32())
			}
			want := make([]float32, size)
			var runs []Run
			for range rng.IntN(6) {
				n := rng.IntN(22)
				runs = append(runs, Run{Pos: int32(rng.IntN(size - n + 1)), At: int32(rng.IntN(size - n + 1)), N: int32(n)})
			}
			for _, r := range runs {
				copy(want[r.Pos:r.Pos+r.N], plane[r.At:r.At+r.N])
			}
			got := make([]float32, size)
			CopyRunsFloat32(got, plane, runs)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("trial %d, runs %v, entry %d: bits %#x, want %#x", trial, runs, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	})
}

// TestAddRunsClearingFloat32 checks that the clearing form of the runs'
// addition adds as addRunsGo does, bit for bit, and leaves +0 in every
// entry of src its runs read and nothing else changed.
func TestAddRunsClearingFloat32(t *testing.T) {
	forEachWidth(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(37, 38))
		const size = 64
		for trial := range 200 {
			src := make([]float32, size)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			plane := make([]float32, size)
			for i := range plane {
				plane[i] = float32(rng.NormFloat64())
			}
			// Runs reading disjoint parts of src, as a tap's do.
			var runs []Run
			for pos := 0; pos < size; {
				n := rng.IntN(22)
				if pos+n > size {
					break
				}
				runs = append(runs, Run{Pos: int32(pos), At: int32(rng.IntN(size - n + 1)), N: int32(n)})
				pos += n + rng.IntN(3)
			}
			want, got := append([]float32(nil), plane...), append([]float32(nil), plane...)
			wantSrc := append([]float32(nil), src...)
			AddRuns(want, src, runs)
			for _, r := range runs {
				clear(wantSrc[r.Pos : r.Pos+r.N])
			}
			AddRunsClearingFloat32(got, src, runs)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("trial %d, plane entry %d: %v, want %v", trial, i, got[i], want[i])
				}
				if math.Float32bits(src[i]) != math.Float32bits(wantSrc[i]) {
					t.Fatalf("trial %d, src entry %d: %v, want %v", trial, i, src[i], wantSrc[i])
				}
			}
		}
	})
}

// TestCopySum4Float32 checks the fused copy and partial sums of
// toChannelMajor's float32 path against copy and AddTo4, bit for bit:
// lengths that are multiples of 4 (LeNet's 784 and 100 positions among
// them), values over 40 binades with infinities and NaNs now and then,
// partial sums that start away from zero.
func TestCopySum4Float32(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	for _, n := range []int{0, 4, 8, 12, 100, 784} {
		for trial := range 20 {
			src := wideFloat32s(rng, n, trial)
			var start [4]float64
			for k := range start {
				start[k] = rng.NormFloat64()
			}
			want, got := start, start
			wantDst, gotDst := make([]float32, n), make([]float32, n)
			copy(wantDst, src)
			AddTo4(&want, src)
			CopySum4Float32(gotDst, src, &got)
			for k := range want {
				if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
					t.Fatalf("%d values, trial %d: part[%d] = %v, want %v", n, trial, k, got[k], want[k])
				}
			}
			for i := range wantDst {
				if math.Float32bits(gotDst[i]) != math.Float32bits(wantDst[i]) {
					t.Fatalf("%d values, trial %d: dst[%d] = %v, want %v", n, trial, i, gotDst[i], wantDst[i])
				}
			}
		}
	}
}

// TestSum4PlanesFloat32 checks the four planes' partial sums against
// CopySum4Float32 on each plane (the loop it stands for), bit for bit:
// LeNet's planes of 784 and 100 positions and shorter ones, planes apart
// by more than their length, values over 40 binades with infinities and
// NaNs now and then, partial sums that start away from zero. (Against
// AddTo4 the sign of a NaN made of two NaNs may differ: x86 keeps the
// first operand's, and the compiled Go loop may put either first; these
// seeds meet that twice.)
func TestSum4PlanesFloat32(t *testing.T) {
	if !UseAVX2 {
		t.Skip("no AVX here: the four planes are summed one at a time (poolToChannelMajor)")
	}
	rng := rand.New(rand.NewPCG(39, 41))
	for _, n := range []int{0, 4, 8, 100, 784} {
		for trial := range 20 {
			stride := n + 4*rng.IntN(5)
			planes := wideFloat32s(rng, 3*stride+n, trial)
			var want [4][4]float64
			for j := range want {
				for k := range want[j] {
					want[j][k] = rng.NormFloat64()
				}
			}
			got := want
			for j := range want {
				CopySum4Float32(make([]float32, n), planes[j*stride:j*stride+n], &want[j])
			}
			Sum4PlanesFloat32(planes, stride, n, &got)
			for j := range want {
				for k := range want[j] {
					if math.Float64bits(got[j][k]) != math.Float64bits(want[j][k]) {
						t.Fatalf("%d values %d apart, trial %d: plane %d's part[%d] = %#x, want %#x", n, stride, trial, j, k, math.Float64bits(got[j][k]), math.Float64bits(want[j][k]))
					}
				}
			}
		}
	}
}

// forEachWidth runs f with the runs' assembly loops at each width this
// CPU has: four values a step (SSE), eight where it has AVX2, and for
// the copy sixteen where it has AVX-512.
func forEachWidth(t *testing.T, f func(t *testing.T)) {
	saved, saved512 := UseAVX2, RunsAVX512
	defer func() { UseAVX2, RunsAVX512 = saved, saved512 }()
	UseAVX2, RunsAVX512 = false, false
	t.Run("sse", f)
	if !avx2 {
		t.Log("no AVX2 here: the eight-value loops are not tested")
		return
	}
	UseAVX2 = true
	t.Run("avx2", f)
	if !avx512 {
		t.Log("no AVX-512 here: the sixteen-value loops are not tested")
		return
	}
	RunsAVX512 = true
	t.Run("avx512", f)
}

// TestBNSums4Float32 checks batch normalisation's two parameter sums made
// in one pass against the loops that make them apart (AddTo4 for Σ g,
// CenteredDot4 for Σ g·(x − m)), bit for bit, with AVX where the
// processor has it and with SSE2: on the planes ResNet-18's layers have,
// values over 40 binades with infinities and NaNs now and then, partial
// sums that start away from zero. Two NaNs count as equal whatever their
// signs (see TestSum4PlanesFloat32).
func TestBNSums4Float32(t *testing.T) {
	widths := []bool{false}
	if UseAVX2 {
		widths = append(widths, true)
	}
	defer func(own bool) { UseAVX2 = own }(UseAVX2)
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	for _, avx := range widths {
		UseAVX2 = avx
		rng := rand.New(rand.NewPCG(45, 46))
		for _, n := range []int{0, 4, 8, 16, 64, 256, 1024} {
			for trial := range 20 {
				g, x := wideFloat32s(rng, n, trial), wideFloat32s(rng, n+rng.IntN(3), trial)
				m := rng.NormFloat64()
				var startG, startGX [4]float64
				for k := range startG {
					startG[k], startGX[k] = rng.NormFloat64(), rng.NormFloat64()
				}
				wantG, wantGX, gotG, gotGX := startG, startGX, startG, startGX
				AddTo4(&wantG, g)
				CenteredDot4(&wantGX, g, x, m)
				BNSums4Float32(g, x, m, &gotG, &gotGX)
				for k := range wantG {
					if !same(gotG[k], wantG[k]) || !same(gotGX[k], wantGX[k]) {
						t.Fatalf("AVX %v, %d values, trial %d: lane %d: Σg %v, Σg(x−m) %v, want %v, %v", avx, n, trial, k, gotG[k], gotGX[k], wantG[k], wantGX[k])
					}
				}
			}
		}
	}
}

// TestGatherFloat32 checks the AVX-512 gather against the Go loop on
// random indices, lengths 0 to 40 (whole vectors and masked tails).
func TestGatherFloat32(t *testing.T) {
	if !RunsAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(47, 48))
	src := wideFloat32s(rng, 300, 4)
	for n := range 41 {
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(rng.IntN(len(src)))
		}
		got := make([]float32, n+16)
		GatherFloat32(got, src, idx)
		for i, j := range idx {
			if math.Float32bits(got[i]) != math.Float32bits(src[j]) {
				t.Fatalf("%d indices: dst[%d] = %v, want src[%d] = %v", n, i, got[i], j, src[j])
			}
		}
		for i := n; i < len(got); i++ {
			if got[i] != 0 {
				t.Fatalf("%d indices: dst[%d] written", n, i)
			}
		}
	}
}

// TestAffine2Float32 checks the AVX and SSE2 forms of batch normalisation's
// input gradient against the Go loop (affine) bit for bit, on the planes
// ResNet-18's layers have, values over 40 binades (so that some results
// round to float32 subnormals or overflow), and now and then an infinity
// or a NaN.
func TestAffine2Float32(t *testing.T) {
	widths := []bool{false}
	if UseAVX2 {
		widths = append(widths, true)
	}
	defer func(own bool) { UseAVX2 = own }(UseAVX2)
	for _, avx := range widths {
		UseAVX2 = avx
		testAffine2Float32(t)
	}
}

func testAffine2Float32(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, n := range []int{0, 4, 8, 16, 64, 256, 1024} {
		for trial := range 20 {
			g, x := wideFloat32s(rng, n, trial), wideFloat32s(rng, n+rng.IntN(3), trial)
			scale := math.Pow(2, float64(rng.IntN(300)-150))
			k, c0, c1 := rng.NormFloat64()*scale, rng.NormFloat64()*scale, rng.NormFloat64()
			want, got := make([]float32, n), make([]float32, n)
			Affine(want, g, x, k, c0, c1)
			Affine2Float32(got, g, x, k, c0, c1)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d values, trial %d: dst[%d] = %v, want %v", n, trial, i, got[i], want[i])
				}
			}
		}
	}
}

// AddConstFloat32 (assembly on amd64) gives the Go loop's bits, over
// lengths around its 16-value steps, values of wide range with
// infinities and NaNs, and a dst longer than src, whose tail it must
// leave alone.
func TestAddConstFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for _, n := range []int{0, 1, 3, 15, 16, 17, 31, 33, 100, 784} {
		for trial := range 20 {
			src := wideFloat32s(rng, n, trial)
			b := float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
			if trial == 9 {
				b = float32(math.Inf(1))
			}
			want, got := make([]float32, n+2), make([]float32, n+2)
			want[n], want[n+1] = 7, 7
			got[n], got[n+1] = 7, 7
			AddConst(want, src, b)
			AddConstFloat32(got, src, b)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d values, trial %d: dst[%d] = %v, want %v", n, trial, i, got[i], want[i])
				}
			}
		}
	}
}
