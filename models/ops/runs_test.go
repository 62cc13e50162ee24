package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/mtsgd/mtsgd/internal/asm"
)

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

// forEachWidth runs f with internal/asm's runs loops at each width this
// build and CPU have: four values a step (SSE), eight where it has AVX2,
// and for the copy sixteen where it has AVX-512.
func forEachWidth(t *testing.T, f func(t *testing.T)) {
	saved, saved512 := asm.UseAVX2, asm.RunsAVX512
	defer func() { asm.UseAVX2, asm.RunsAVX512 = saved, saved512 }()
	asm.UseAVX2, asm.RunsAVX512 = false, false
	t.Run("sse", f)
	if !saved {
		t.Log("no AVX2 here: the eight-value loops are not tested")
		return
	}
	asm.UseAVX2 = true
	t.Run("avx2", f)
	if !saved512 {
		t.Log("no AVX-512 here: the sixteen-value loops are not tested")
		return
	}
	asm.RunsAVX512 = true
	t.Run("avx512", f)
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

// BenchmarkUnfold times unfold on LeNet's first convolution (256
// examples, 10 filters, 28×28 outputs): each row of the product with its
// bias added by asm.AddConstFloat32 ("float32", the assembly on amd64), and
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
					asm.AddConst(out[at:at+p], prod[(o*g.n+n)*p:][:p], bias[o])
				}
			}
		}
	})
}

// TestCol2imPlanes checks col2im a plane row at a time
// (asm.Col2imPlaneFloat32) against the runs with clearing (col2imRuns)
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
