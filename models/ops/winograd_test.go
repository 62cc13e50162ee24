package ops

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestWinogradChangesLittle runs 3×3 convolutions of stride 1 and
// padding 1 (winogradFits) in float32 with Winograd's products and
// compares the output and the gradients of the input, filters and bias
// with the same graph in float64 over im2col's products (the reference
// TestConv2dMatchesGorgonia checks against Gorgonia's own convolution),
// over three runs: new inputs, then new filters, which the kept U must
// follow. Each differs by at most 1e-6 of its largest value (2.4e-7
// measured): float32's rounding, which F(2×2, 3×3)'s transforms (sums of
// up to 16 terms, entries ±1 and ±½) grow a little. The planes cover one
// tile (ResNet-18's last layer), tiles on every edge, and rows wider
// than they are tall; the backward pass runs over the whole batch, by
// blocks of one image (two halves of blocks, one of them odd), and as
// it runs on ResNet-18 (one block here), and in each the pass's sums
// must come from the input gradient's blocks (the order the tape runs
// them in: else the filter gradient remakes Z over the whole batch).
func TestWinogradChangesLittle(t *testing.T) {
	defer func(saved bool) { winogradConvs = saved }(winogradConvs)
	defer func(tiles, pairs int) { winoBlockTiles, winoBlockedPairs = tiles, pairs }(winoBlockTiles, winoBlockedPairs)
	for _, mode := range []struct {
		name         string
		tiles, pairs int
	}{{"whole-batch", winoBlockTiles, 0}, {"image-blocks", 1, winoBlockedPairs}, {"default", winoBlockTiles, winoBlockedPairs}} {
		winoBlockTiles, winoBlockedPairs = mode.tiles, mode.pairs
		for _, c := range []convCase{
			{n: 3, c: 5, h: 2, w: 2, o: 7, k: 3, stride: 1, pad: 1},
			{n: 2, c: 3, h: 8, w: 6, o: 4, k: 3, stride: 1, pad: 1, bias: true},
			{n: 2, c: 4, h: 4, w: 4, o: 3, k: 3, stride: 1, pad: 1},
			{n: 1, c: 2, h: 10, w: 12, o: 5, k: 3, stride: 1, pad: 1, bias: true},
			{n: 5, c: 3, h: 4, w: 6, o: 2, k: 3, stride: 1, pad: 1},
		} {
			t.Run(mode.name+"/"+c.String(), func(t *testing.T) { winogradChangesLittle(t, c) })
		}
	}
}

func winogradChangesLittle(t *testing.T, c convCase) {
	rng := rand.New(rand.NewPCG(21, uint64(c.h)))
	ins := c.inputs(rng)
	winogradConvs = true
	wino := newProbe(t, tensor.Float32, ins, c.wrt(), rand.New(rand.NewPCG(22, 0)), c.ours)
	winogradConvs = false
	ref := newProbe(t, tensor.Float64, ins, c.wrt(), rand.New(rand.NewPCG(22, 0)), c.ours)
	for run, change := range []func() []float64{
		func() []float64 { return nil },
		func() []float64 { return randomInput(rng, "x", c.n, c.c, c.h, c.w).vals },
		func() []float64 { return randomInput(rng, "w", c.o, c.c, c.k, c.k).vals },
	} {
		vals := change()
		results := make([][][]float64, 2)
		for i, p := range []*probe{wino, ref} {
			switch run {
			case 1:
				setAll(p.vals[0], vals)
			case 2:
				setAll(p.vals[1], vals)
			}
			winogradConvs = i == 0
			out, _, grads := p.run(t)
			results[i] = append([][]float64{out}, grads...)
		}
		st, ok := convOf(t, wino.out).state.(*convState[float32])
		if !ok || !st.wino {
			t.Fatalf("run %d: the float32 convolution did not use Winograd's products", run)
		}
		if g := convOf(t, wino.out).g; winoBlocked(g) && (!st.winoSummed || st.winoFilterDone) {
			t.Errorf("run %d: the filter gradient ran before the input gradient's blocks", run)
		}
		for k := range results[0] {
			if d := maxRelDiff(results[0][k], results[1][k]); d > 1e-6 || math.IsNaN(d) {
				t.Errorf("run %d: value %d (output, then gradients) differs by %.3g of its largest value", run, k, d)
			}
		}
	}
}

// convOf is the convolution op whose output is n, or n's input if n is
// not one.
func convOf(t *testing.T, n *gorgonia.Node) *convOp {
	t.Helper()
	if op, ok := n.Op().(*convOp); ok {
		return op
	}
	t.Fatalf("%v is not a convolution's output", n)
	return nil
}

// TestWinogradTransformsOneTile checks each transform against the
// convolution written out for one 4×4 window: the forward tile from the
// filter and input transforms, and the filter gradient and input
// gradient from Z, each as the sum of products it stands for (a brute
// force over the 3×3 taps), to 1e-5 of the values' scale.
func TestWinogradTransformsOneTile(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 0))
	g := geometry{n: 1, c: 1, h: 2, w: 2, o: 1, k: 3, stride: 1, pad: 1, oh: 2, ow: 2}
	for range 20 {
		x, w, dy := make([]float32, 4), make([]float32, 9), make([]float32, 4)
		for _, s := range [][]float32{x, w, dy} {
			for i := range s {
				s[i] = float32(rng.NormFloat64())
			}
		}
		// Direct convolution over the 2×2 plane with padding 1, and its
		// two gradients for the output gradient dy.
		wantY, wantDW, wantDX := make([]float64, 4), make([]float64, 9), make([]float64, 4)
		for oy := range 2 {
			for ox := range 2 {
				for i := range 3 {
					for j := range 3 {
						r, q := oy+i-1, ox+j-1
						if r < 0 || r >= 2 || q < 0 || q >= 2 {
							continue
						}
						wantY[oy*2+ox] += float64(w[i*3+j]) * float64(x[r*2+q])
						wantDW[i*3+j] += float64(dy[oy*2+ox]) * float64(x[r*2+q])
						wantDX[r*2+q] += float64(dy[oy*2+ox]) * float64(w[i*3+j])
					}
				}
			}
		}
		var st convState[float32]
		y := make([]float32, 4)
		winoForward(g, &st, x, w, nil, y)
		winoGradTransform(g, &st, dy)
		dw, dx := make([]float32, 9), make([]float32, 4)
		winoFilterGrad(g, &st, dy, dw)
		winoInputGrad(g, &st, w, dx)
		// By blocks (winoBlockedInputGrad), the input gradient first.
		st.winoSummed, st.winoFilterDone = false, false
		dwBlocks, dxBlocks := make([]float32, 9), make([]float32, 4)
		winoBlockedInputGrad(g, &st, dy, w, dxBlocks)
		winoFilterGrad(g, &st, dy, dwBlocks)
		for _, c := range []struct {
			name string
			got  []float32
			want []float64
		}{
			{"output", y, wantY}, {"filter gradient", dw, wantDW}, {"input gradient", dx, wantDX},
			{"filter gradient by blocks", dwBlocks, wantDW}, {"input gradient by blocks", dxBlocks, wantDX},
		} {
			for i := range c.want {
				if d := math.Abs(float64(c.got[i]) - c.want[i]); d > 1e-5*(1+math.Abs(c.want[i])) {
					t.Fatalf("%s[%d] = %v, want %v", c.name, i, c.got[i], c.want[i])
				}
			}
		}
	}
}

// TestWinogradFilterGradHelped checks that the filter gradient's
// transform cut between filters for a helper (filterGradTransform) gives
// the bits of the uncut one, and that the helper ran a half.
func TestWinogradFilterGradHelped(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 0))
	g := geometry{n: 1, c: 128, h: 4, w: 4, o: 129, k: 3, stride: 1, pad: 1, oh: 4, ow: 4}
	m := make([]float32, 16*spaced(g.o*g.c))
	for i := range m {
		m[i] = float32(rng.NormFloat64())
	}
	want := make([]float32, 9*g.o*g.c)
	filterGradTransform(g, m, want)
	stopHelper := startHelper()
	defer stopHelper()
	// A pass takes well under a millisecond, less than the helper may
	// need to reach a core on a loaded machine: passes are repeated for
	// up to ten seconds.
	ranHalf := false
	for start := time.Now(); !ranHalf && time.Since(start) < 10*time.Second; {
		before := SharedHalves()
		got := make([]float32, len(want))
		filterGradTransform(g, m, got)
		ranHalf = SharedHalves() != before
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("dw[%d] = %v helped, %v alone", i, got[i], want[i])
			}
		}
	}
	if !ranHalf {
		t.Error("the helper ran no half in ten seconds of passes")
	}
}

// TestWinogradBlocksHelped checks that a backward pass by blocks
// (winoBlockedInputGrad), whose second half of blocks a helper may take,
// gives the bits of the pass run alone, and that the helper ran a half.
func TestWinogradBlocksHelped(t *testing.T) {
	defer func(saved int) { winoBlockTiles = saved }(winoBlockTiles)
	winoBlockTiles = 16 // an image's: six blocks
	rng := rand.New(rand.NewPCG(28, 0))
	g := geometry{n: 6, c: 8, h: 8, w: 8, o: 16, k: 3, stride: 1, pad: 1, oh: 8, ow: 8}
	normal := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	x, w, gm := normal(g.n*g.c*g.h*g.w), normal(g.o*g.c*9), normal(g.o*g.n*g.positions())
	var st convState[float32]
	winoForward(g, &st, x, w, nil, make([]float32, g.n*g.o*g.positions()))
	pass := func() (dw, dx []float32) {
		dw, dx = make([]float32, g.o*g.c*9), make([]float32, len(x))
		st.winoSummed, st.winoFilterDone = false, false
		winoBlockedInputGrad(g, &st, gm, w, dx)
		winoFilterGrad(g, &st, gm, dw)
		return dw, dx
	}
	wantDW, wantDX := pass()
	stopHelper := startHelper()
	defer stopHelper()
	ranHalf := false // passes repeated until the helper takes one
	for start := time.Now(); !ranHalf && time.Since(start) < 10*time.Second; {
		before := SharedHalves()
		dw, dx := pass()
		ranHalf = SharedHalves() != before
		for _, c := range []struct {
			name      string
			got, want []float32
		}{{"dw", dw, wantDW}, {"dx", dx, wantDX}} {
			for i := range c.want {
				if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
					t.Fatalf("%s[%d] = %v helped, %v alone", c.name, i, c.got[i], c.want[i])
				}
			}
		}
	}
	if !ranHalf {
		t.Error("the helper ran no half in ten seconds of passes")
	}
}

// TestWinogradInputTransform checks inputTransform, which makes each
// row of tiles' Bᵀ d once over the whole width, against the transform
// taken window by window, bit for bit, on planes from one tile to many,
// with signed zeros among the values.
func TestWinogradInputTransform(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 0))
	for _, s := range [][3]int{{3, 2, 2}, {2, 4, 4}, {2, 8, 6}, {1, 10, 12}, {2, 16, 16}} {
		g := geometry{n: s[0], c: 3, h: s[1], w: s[2], o: 2, k: 3, stride: 1, pad: 1, oh: s[1], ow: s[2]}
		x := make([]float32, g.n*g.c*g.h*g.w)
		for i := range x {
			if rng.IntN(6) == 0 {
				x[i] = float32(math.Copysign(0, -1))
			} else {
				x[i] = float32(rng.NormFloat64())
			}
		}
		n := 16 * spaced(g.c*g.tiles())
		got, want := make([]float32, n), make([]float32, n)
		inputTransform(g, x, 0, g.c, got)
		inputTransformByWindows(g, x, want)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: v[%d] = %v, by windows %v", g, i, got[i], want[i])
			}
		}
	}
}

// inputTransformByWindows is inputTransform window by window: each
// tile's 4×4 window copied (zero outside the plane), Bᵀ d by columns,
// then B by rows.
func inputTransformByWindows(g geometry, x []float32, v []float32) {
	th, tw := g.oh/2, g.ow/2
	ct := spaced(g.c * g.tiles())
	for c := range g.c {
		for n := range g.n {
			plane := x[(n*g.c+c)*g.h*g.w:][:g.h*g.w]
			dst := v[c*g.tiles()+n*th*tw:]
			for ty := range th {
				for tx := range tw {
					var d [4][4]float32
					window(plane, g.h, g.w, 2*ty-1, 2*tx-1, &d)
					for j := range 4 {
						d0, d1, d2, d3 := d[0][j], d[1][j], d[2][j], d[3][j]
						d[0][j], d[1][j], d[2][j], d[3][j] = d0-d2, d1+d2, d2-d1, d1-d3
					}
					at := ty*tw + tx
					for i := range 4 {
						r := &d[i]
						dst[(4*i+0)*ct+at] = r[0] - r[2]
						dst[(4*i+1)*ct+at] = r[1] + r[2]
						dst[(4*i+2)*ct+at] = r[2] - r[1]
						dst[(4*i+3)*ct+at] = r[1] - r[3]
					}
				}
			}
		}
	}
}

// window copies the 4×4 values of plane (h × w) from row r0 and column
// q0 on into d, zero outside the plane.
func window(plane []float32, h, w, r0, q0 int, d *[4][4]float32) {
	if r0 >= 0 && q0 >= 0 && r0+4 <= h && q0+4 <= w {
		for i := range 4 {
			row := plane[(r0+i)*w+q0:][:4]
			d[i] = [4]float32{row[0], row[1], row[2], row[3]}
		}
		return
	}
	for i := range 4 {
		r := r0 + i
		for j := range 4 {
			q := q0 + j
			if r >= 0 && r < h && q >= 0 && q < w {
				d[i][j] = plane[r*w+q]
			} else {
				d[i][j] = 0
			}
		}
	}
}
