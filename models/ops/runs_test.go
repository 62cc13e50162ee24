package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/blas"
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
			var runs []tapRun
			for range rng.IntN(6) {
				n := rng.IntN(22)
				runs = append(runs, tapRun{pos: int32(rng.IntN(size - n + 1)), at: int32(rng.IntN(size - n + 1)), n: int32(n)})
			}
			addRunsGo(want, src, runs)
			srcBefore := append([]float32(nil), src...)
			addRunsFloat32(got, src, runs)
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
	})
}

// TestRunsMatchPositions checks that walking a geometry's taps as runs
// (in float32 the assembly loops) gives im2col and col2im the results of
// walking them position by position, bit for bit: each input position
// receives the same additions in the same order. The geometries are
// ResNet-18's and LeNet's stride-1 shapes, rows of 2 to 10.
func TestRunsMatchPositions(t *testing.T) {
	forEachWidth(t, func(t *testing.T) {
		for _, g := range []geometry{
			{n: 3, c: 2, h: 14, w: 14, o: 2, k: 5, stride: 1},
			{n: 3, c: 2, h: 8, w: 8, o: 2, k: 3, stride: 1, pad: 1},
			{n: 3, c: 2, h: 4, w: 4, o: 2, k: 3, stride: 1, pad: 1},
			{n: 3, c: 2, h: 2, w: 2, o: 2, k: 3, stride: 1, pad: 1},
		} {
			g.oh = (g.h+2*g.pad-g.k)/g.stride + 1
			g.ow = (g.w+2*g.pad-g.k)/g.stride + 1
			rng := rand.New(rand.NewPCG(35, uint64(g.h)))
			ld := g.n * g.positions()
			cols := make([]float32, g.rows()*ld)
			for i := range cols {
				cols[i] = float32(rng.NormFloat64())
			}
			x := make([]float32, g.n*g.c*g.h*g.w)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			runs, one := makeTaps(g, true), makeTaps(g, false)
			wantDx, gotDx := make([]float32, len(x)), make([]float32, len(x))
			col2imTaps(g, one, cols, ld, 0, g.n, wantDx)
			col2imTaps(g, runs, cols, ld, 0, g.n, gotDx)
			wantCols, gotCols := make([]float32, len(cols)), make([]float32, len(cols))
			im2colTaps(g, one, x, 0, g.n, wantCols, ld)
			im2colTaps(g, runs, x, 0, g.n, gotCols, ld)
			for i := range wantDx {
				if math.Float32bits(gotDx[i]) != math.Float32bits(wantDx[i]) {
					t.Fatalf("%d×%d, k %d: col2im entry %d: %v, want %v", g.h, g.w, g.k, i, gotDx[i], wantDx[i])
				}
			}
			for i := range wantCols {
				if math.Float32bits(gotCols[i]) != math.Float32bits(wantCols[i]) {
					t.Fatalf("%d×%d, k %d: im2col entry %d: %v, want %v", g.h, g.w, g.k, i, gotCols[i], wantCols[i])
				}
			}
		}
	})
}

// TestChannelSumsMatchBiasGrad checks that the channel sums made while
// reordering an output gradient (toChannelMajor) are those biasGrad's
// sums make of the reordered rows, bit for bit, for LeNet's and
// ResNet-18's positions per example (multiples of 4). In float64, where
// a change in the order of the additions shows in the last bits.
func TestChannelSumsMatchBiasGrad(t *testing.T) {
	for _, g := range []geometry{
		{n: 7, o: 10, oh: 28, ow: 28},
		{n: 5, o: 20, oh: 10, ow: 10},
		{n: 9, o: 6, oh: 2, ow: 2},
	} {
		rng := rand.New(rand.NewPCG(36, uint64(g.oh)))
		src := make([]float64, g.n*g.o*g.positions())
		for i := range src {
			src[i] = rng.NormFloat64() * math.Pow(2, float64(rng.IntN(20)-10))
		}
		dst := make([]float64, len(src))
		part, got := make([][4]float64, g.o), make([]float64, g.o)
		toChannelMajor(g, src, dst, part, got)
		want := make([]float64, g.o)
		sums(dst, g.o, g.n*g.positions(), false, want)
		for o := range want {
			if got[o] != want[o] {
				t.Errorf("%d positions, channel %d: %v, want %v", g.positions(), o, got[o], want[o])
			}
		}
	}
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
			var runs []tapRun
			for pos := 0; pos < size; {
				n := rng.IntN(22)
				if pos+n > size {
					break
				}
				runs = append(runs, tapRun{pos: int32(pos), at: int32(rng.IntN(size - n + 1)), n: int32(n)})
				pos += n + rng.IntN(3)
			}
			want, got := append([]float32(nil), plane...), append([]float32(nil), plane...)
			wantSrc := append([]float32(nil), src...)
			addRunsGo(want, src, runs)
			for _, r := range runs {
				clear(wantSrc[r.pos : r.pos+r.n])
			}
			addRunsClearingFloat32(got, src, runs)
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

// TestConvBackInputClearing checks that the input gradient made with the
// patches' gradient cleared by col2im (β = 1 on the cleared buffer) is
// the one made with the BLAS clearing it (β = 0), bit for bit, over
// several runs and a last chunk smaller than the others, and that the
// buffer is all +0 after each run. (With AVX-512 this geometry's input
// gradient reads no patches, tapInputGrad: turned off here.)
func TestConvBackInputClearing(t *testing.T) {
	defer func(saved bool) { tappedPatches = saved }(tappedPatches)
	tappedPatches = false
	forEachWidth(t, func(t *testing.T) {
		g := geometry{n: 23, c: 3, h: 14, w: 14, o: 4, k: 5, stride: 1, oh: 10, ow: 10} // chunks of 10, 10, 3
		rng := rand.New(rand.NewPCG(39, 40))
		draw := func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			return v
		}
		w := draw(g.o * g.rows())
		var clearing, plain convState[float32]
		for run := range 3 {
			gm := draw(g.o * g.n * g.positions())
			want := make([]float32, g.n*g.c*g.h*g.w)
			got := make([]float32, len(want))
			for n0 := 0; n0 < g.n; n0 += g.chunk() { // the path without clearing
				n1 := min(g.n, n0+g.chunk())
				cols := (n1 - n0) * g.positions()
				dcols := plain.dcols.get(g.rows() * cols)
				gemm(blas.Trans, blas.NoTrans, g.rows(), cols, g.o, w, g.rows(), gm[n0*g.positions():], g.n*g.positions(), 0, dcols, cols)
				col2im(g, dcols, cols, n0, n1, want)
			}
			convBackInput(g, &clearing, w, gm, got)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("run %d, entry %d: %v, want %v", run, i, got[i], want[i])
				}
			}
			for i, v := range clearing.dcols[:cap(clearing.dcols)] {
				if math.Float32bits(v) != 0 {
					t.Fatalf("run %d: patches' gradient entry %d is %v after col2im", run, i, v)
				}
			}
		}
	})
}

// TestCopySum4Float32 checks the fused copy and partial sums of
// toChannelMajor's float32 path against copy and addTo4, bit for bit:
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
			addTo4(&want, src)
			copySum4Float32(gotDst, src, &got)
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
// copySum4Float32 on each plane (the loop it stands for), bit for bit:
// LeNet's planes of 784 and 100 positions and shorter ones, planes apart
// by more than their length, values over 40 binades with infinities and
// NaNs now and then, partial sums that start away from zero. (Against
// addTo4 the sign of a NaN made of two NaNs may differ: x86 keeps the
// first operand's, and the compiled Go loop may put either first; these
// seeds meet that twice.)
func TestSum4PlanesFloat32(t *testing.T) {
	if !useAVX2 {
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
				copySum4Float32(make([]float32, n), planes[j*stride:j*stride+n], &want[j])
			}
			sum4PlanesFloat32(planes, stride, n, &got)
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
	saved, saved512 := useAVX2, runsAVX512
	defer func() { useAVX2, runsAVX512 = saved, saved512 }()
	useAVX2, runsAVX512 = false, false
	t.Run("sse", f)
	if !cpu.X86.HasAVX2 {
		t.Log("no AVX2 here: the eight-value loops are not tested")
		return
	}
	useAVX2 = true
	t.Run("avx2", f)
	if !cpu.X86.HasAVX512F {
		t.Log("no AVX-512 here: the sixteen-value loops are not tested")
		return
	}
	runsAVX512 = true
	t.Run("avx512", f)
}

// TestBNSums4Float32 checks batch normalisation's two parameter sums made
// in one pass against the loops that make them apart (addTo4 for Σ g,
// centeredDot4 for Σ g·(x − m)), bit for bit, with AVX where the
// processor has it and with SSE2: on the planes ResNet-18's layers have,
// values over 40 binades with infinities and NaNs now and then, partial
// sums that start away from zero. Two NaNs count as equal whatever their
// signs (see TestSum4PlanesFloat32).
func TestBNSums4Float32(t *testing.T) {
	widths := []bool{false}
	if useAVX2 {
		widths = append(widths, true)
	}
	defer func(own bool) { useAVX2 = own }(useAVX2)
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	for _, avx := range widths {
		useAVX2 = avx
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
				addTo4(&wantG, g)
				centeredDot4(&wantGX, g, x, m)
				bnSums4Float32(g, x, m, &gotG, &gotGX)
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
	if !runsAVX512 {
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
		gatherFloat32(got, src, idx)
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

// TestPooledEntriesFloat32 checks the AVX-512 pooled entries against the
// Go loop bit for bit: lengths 0 to 40, argmaxes −1 about half the time,
// gradients over 40 binades with infinities and NaNs now and then.
func TestPooledEntriesFloat32(t *testing.T) {
	if !runsAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(49, 50))
	for n := range 41 {
		grad := wideFloat32s(rng, n, 4)
		argmax := make([]int32, n)
		for i := range argmax {
			argmax[i] = int32(rng.IntN(2000)) - 1
			if rng.IntN(2) == 0 {
				argmax[i] = -1
			}
		}
		wantV, wantArg := make([]float32, n), make([]float32, n)
		gotV, gotArg := make([]float32, n+16), make([]float32, n+16)
		pooledEntries(wantV, wantArg, grad, argmax)
		pooledEntriesFloat32(gotV, gotArg, grad, argmax)
		for i := range n {
			if math.Float32bits(gotV[i]) != math.Float32bits(wantV[i]) || math.Float32bits(gotArg[i]) != math.Float32bits(wantArg[i]) {
				t.Fatalf("%d outputs: entry %d: %v, %#x, want %v, %#x", n, i, gotV[i], math.Float32bits(gotArg[i]), wantV[i], math.Float32bits(wantArg[i]))
			}
		}
		for i := n; i < len(gotV); i++ {
			if gotV[i] != 0 || gotArg[i] != 0 {
				t.Fatalf("%d outputs: entry %d written", n, i)
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
	if useAVX2 {
		widths = append(widths, true)
	}
	defer func(own bool) { useAVX2 = own }(useAVX2)
	for _, avx := range widths {
		useAVX2 = avx
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
			affine(want, g, x, k, c0, c1)
			affine2Float32(got, g, x, k, c0, c1)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d values, trial %d: dst[%d] = %v, want %v", n, trial, i, got[i], want[i])
				}
			}
		}
	}
}

// wideFloat32s is n values spread over 40 binades and, in every fifth
// trial, now and then an infinity or a NaN.
func wideFloat32s(rng *rand.Rand, n, trial int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
		if trial%5 == 4 && rng.IntN(50) == 0 {
			v[i] = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}[rng.IntN(3)]
		}
	}
	return v
}

// addConstFloat32 (assembly on amd64) gives the Go loop's bits, over
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
			addConst(want, src, b)
			addConstFloat32(got, src, b)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d values, trial %d: dst[%d] = %v, want %v", n, trial, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkUnfold times unfold on LeNet's first convolution (256
// examples, 10 filters, 28×28 outputs): each row of the product with its
// bias added by addConstFloat32 ("float32", the assembly on amd64), and
// by the Go loop ("go").
func BenchmarkUnfold(b *testing.B) {
	g := geometry{n: 256, c: 1, h: 36, w: 36, o: 10, k: 9, stride: 1, oh: 28, ow: 28}
	p := g.positions()
	rng := rand.New(rand.NewPCG(47, 48))
	prod, bias := wideFloat32s(rng, g.o*g.n*p, 0), wideFloat32s(rng, g.o, 0)
	out := make([]float32, g.n*g.o*p)
	b.Run("float32", func(b *testing.B) {
		for b.Loop() {
			unfold(g, prod, 0, g.n, bias, out)
		}
	})
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			for n := range g.n {
				for o := range g.o {
					at := (n*g.o + o) * p
					addConst(out[at:at+p], prod[(o*g.n+n)*p:][:p], bias[o])
				}
			}
		}
	})
}

// TestCol2imPlanes checks col2im a plane row at a time
// (col2imPlaneFloat32) against the runs with clearing (col2imRuns)
// bit for bit, on 100 seeded geometries with input rows of at most 16
// (stride 1, no padding), values with signed zeros, infinities and NaNs,
// planes that do not start at zero, and a chunk's later images: the same
// input gradient, and every patch-gradient value read set to +0.
func TestCol2imPlanes(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(43, 44))
	for range 100 {
		k := 1 + rng.IntN(6)
		w := k + minRun - 1 + rng.IntN(18-k-minRun) // rows of runs (ow ≥ minRun), as the clearing col2im needs
		h := k + rng.IntN(10)
		g := geometry{n: 1 + rng.IntN(4), c: 1 + rng.IntN(3), h: h, w: w, o: 1, k: k, stride: 1, oh: h - k + 1, ow: w - k + 1}
		n0 := rng.IntN(g.n)
		chunk := g.n - n0
		ld := chunk*g.positions() + rng.IntN(5)
		cols := make([]float32, g.rows()*ld)
		for i := range cols {
			cols[i] = float32(rng.NormFloat64())
			if rng.IntN(6) == 0 {
				cols[i] = specialFloat32(rng)
			}
		}
		dx := make([]float32, g.n*g.c*g.h*g.w)
		for i := range dx {
			dx[i] = float32(rng.NormFloat64())
			if rng.IntN(4) == 0 {
				dx[i] = float32(math.Copysign(0, -1)) // a tap must leave the lanes it does not reach, −0 included, as they are
			}
		}
		wantCols, wantDx := append([]float32(nil), cols...), append([]float32(nil), dx...)
		col2imRuns(g, tapsOf(g), wantCols, ld, n0, g.n, wantDx, true)
		col2imPlanes(g, cols, ld, n0, 0, chunk, dx)
		for i := range dx {
			if math.Float32bits(dx[i]) != math.Float32bits(wantDx[i]) {
				t.Fatalf("%v, from image %d: dx[%d] bits %#x, want %#x", g, n0, i, math.Float32bits(dx[i]), math.Float32bits(wantDx[i]))
			}
		}
		for i := range cols {
			if math.Float32bits(cols[i]) != math.Float32bits(wantCols[i]) {
				t.Fatalf("%v, from image %d: cols[%d] bits %#x, want %#x", g, n0, i, math.Float32bits(cols[i]), math.Float32bits(wantCols[i]))
			}
		}
	}
}
