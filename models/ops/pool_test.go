package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
)

type poolCase struct{ n, c, h, w, k, stride, pad int }

// poolCases: LeNet's 2×2/2 pools, ResNet-18's 3×3/2 with padding 1, an
// odd size whose last row and column no window covers, and overlapping
// windows with stride 1.
var poolCases = []poolCase{
	{n: 2, c: 3, h: 8, w: 8, k: 2, stride: 2},
	{n: 2, c: 2, h: 9, w: 8, k: 3, stride: 2, pad: 1},
	{n: 3, c: 2, h: 5, w: 5, k: 2, stride: 2},
	{n: 2, c: 2, h: 6, w: 5, k: 3, stride: 1, pad: 1},
}

func (c poolCase) String() string {
	return fmt.Sprintf("%dx%dx%dx%d_k%d_s%d_p%d", c.n, c.c, c.h, c.w, c.k, c.stride, c.pad)
}

func (c poolCase) ours(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
	x, err := notLeaf(nodes[0])
	if err != nil {
		return nil, err
	}
	return ReLUMaxPool2d(x, c.k, c.stride, c.pad)
}

// builtin is Gorgonia's Rectify then MaxPool2D.
func (c poolCase) builtin(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
	x, err := notLeaf(nodes[0])
	if err != nil {
		return nil, err
	}
	if x, err = gorgonia.Rectify(x); err != nil {
		return nil, err
	}
	return gorgonia.MaxPool2D(x, tensor.Shape{c.k, c.k}, []int{c.pad, c.pad}, []int{c.stride, c.stride})
}

// TestReLUMaxPoolMatchesGorgonia compares output and gradient with
// Gorgonia's Rectify + MaxPool2D exactly (both pick a maximum and copy
// it), on two runs of one machine, and the gradient with central
// differences; random normal inputs have no ties.
func TestReLUMaxPoolMatchesGorgonia(t *testing.T) {
	for _, c := range poolCases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, uint64(c.h*10+c.k)))
			ins := []input{randomInput(rng, "x", c.n, c.c, c.h, c.w)}
			ours := newProbe(t, tensor.Float64, ins, []int{0}, rand.New(rand.NewPCG(9, 0)), c.ours)
			ref := newProbe(t, tensor.Float64, ins, []int{0}, rand.New(rand.NewPCG(9, 0)), c.builtin)
			for run := range 2 {
				if run == 1 {
					in := randomInput(rng, "x", c.n, c.c, c.h, c.w)
					setAll(ours.vals[0], in.vals)
					setAll(ref.vals[0], in.vals)
				}
				out, _, grads := ours.run(t)
				wantOut, _, wantGrads := ref.run(t)
				if d := maxRelDiff(out, wantOut); d != 0 {
					t.Errorf("run %d: output differs by %.3g", run, d)
				}
				if d := maxRelDiff(grads[0], wantGrads[0]); d != 0 {
					t.Errorf("run %d: gradient differs by %.3g", run, d)
				}
			}
			fdCheck(t, ours, []int{0}, rng)
		})
	}
}

func TestReLUMaxPoolRejectsBadWindows(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(1, 1, 4, 4), gorgonia.WithName("x"))
	for _, tc := range [][3]int{{0, 1, 0}, {2, 0, 0}, {3, 2, 2}, {5, 1, 0}} {
		if _, err := ReLUMaxPool2d(x, tc[0], tc[1], tc[2]); err == nil {
			t.Errorf("window %d, stride %d, padding %d: no error", tc[0], tc[1], tc[2])
		}
	}
}

// specialFloat32 draws a value that exercises the 2×2 pools' comparisons:
// ties (few distinct values), ±0, negatives, ±Inf and NaN.
func specialFloat32(rng *rand.Rand) float32 {
	switch rng.IntN(12) {
	case 0:
		return float32(math.Copysign(0, -1))
	case 1:
		return 0
	case 2:
		return float32(math.Inf(1))
	case 3:
		return float32(math.Inf(-1))
	case 4:
		return float32(math.NaN())
	case 5:
		return -float32(math.NaN())
	default:
		return float32(rng.IntN(7)-3) / 2 // ties
	}
}

// TestPool2x2Float32 checks the branch-free float32 2×2 pools, with and
// without argmaxes, against the generic loop (pool2x2) bit for bit,
// outputs and argmaxes, on inputs full of ties, signed zeros, infinities
// and NaNs, and on random normals.
func TestPool2x2Float32(t *testing.T) {
	for _, tc := range []struct {
		special bool
		h, w    int
	}{
		// 7×11: the last row and column are in no window; 5 outputs a
		// row, one quad (four windows in SSE2) and one window after it.
		{true, 7, 11}, {false, 7, 11},
		// LeNet's pools: 14 and 5 outputs a row; then 8, quads only; 3,
		// no quad.
		{true, 28, 28}, {true, 10, 10}, {true, 16, 17}, {true, 6, 6},
	} {
		special := tc.special
		g := geometry{n: 3, c: 4, h: tc.h, w: tc.w, o: 4, k: 2, stride: 2}
		g.oh, g.ow = tc.h/2, tc.w/2
		rng := rand.New(rand.NewPCG(21, 22))
		draw := func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				if special {
					v[i] = specialFloat32(rng)
				} else {
					v[i] = float32(rng.NormFloat64())
				}
			}
			return v
		}
		x := draw(g.n * g.c * g.h * g.w)
		outs := g.n * g.c * g.oh * g.ow
		want, got := make([]float32, outs), make([]float32, outs)
		wantArg, gotArg := make([]int32, outs), make([]int32, outs)
		pool2x2(g, x, want, wantArg)
		if asm.UseAVX512 {
			// The AVX-512 loop, then the SSE2 one below.
			pool2x2Float32(g, x, got, gotArg)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || gotArg[i] != wantArg[i] {
					t.Fatalf("AVX-512: %d×%d, special %v, output %d: %v at %d, want %v at %d", tc.h, tc.w, special, i, got[i], gotArg[i], want[i], wantArg[i])
				}
			}
			asm.UseAVX512 = false
			pool2x2Float32(g, x, got, gotArg)
			asm.UseAVX512 = true
		} else {
			pool2x2Float32(g, x, got, gotArg)
		}
		values := make([]float32, outs)
		pool2x2MaxFloat32(g, x, values)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || gotArg[i] != wantArg[i] {
				t.Fatalf("%d×%d, special %v, output %d: %v at %d, want %v at %d", tc.h, tc.w, special, i, got[i], gotArg[i], want[i], wantArg[i])
			}
			if math.Float32bits(values[i]) != math.Float32bits(want[i]) {
				t.Fatalf("special %v, output %d without argmaxes: %v, want %v", special, i, values[i], want[i])
			}
		}
	}
}

// BenchmarkPool2x2 times LeNet's first pool (256 examples, 10 channels,
// 28×28), the generic loop against the float32 one without branches on
// the data.
func BenchmarkPool2x2(b *testing.B) {
	g := geometry{n: 256, c: 10, h: 28, w: 28, o: 10, k: 2, stride: 2, oh: 14, ow: 14}
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, g.n*g.c*g.h*g.w)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y, arg := make([]float32, len(x)/4), make([]int32, len(x)/4)
	b.Run("forward/generic", func(b *testing.B) {
		for b.Loop() {
			pool2x2(g, x, y, arg)
		}
	})
	b.Run("forward/float32", func(b *testing.B) {
		for b.Loop() {
			pool2x2Float32(g, x, y, arg)
		}
	})
	b.Run("forward/float32-no-argmax", func(b *testing.B) {
		for b.Loop() {
			pool2x2MaxFloat32(g, x, y)
		}
	})
	b.Run("backward", func(b *testing.B) {
		pool2x2Float32(g, x, y, arg)
		dx := make([]float32, len(x))
		for b.Loop() {
			poolBackwardPlanes(g, arg, y, dx, 0, g.n*g.c)
		}
	})
}

// TestFoldedPoolsSameBits checks that a convolution feeding a pool runs
// the pool (convOp's pool) and makes its gradient (convGradMatrix's
// pool), and gives the output, loss and gradients of the ops run apart,
// bit for bit, in float32 and float64: a leaf input (no input gradient)
// and one whose gradient is taken, outputs of 8×8 (the AVX-512 pool,
// sums four at a time) and of 7×7 (the Go loops, an odd edge, sums over
// positions not a multiple of 4), and a convolution whose output two
// pools read, which runs neither.
func TestFoldedPoolsSameBits(t *testing.T) {
	defer func(pools, grads, pooled bool) { foldPools, foldPoolGrads, pooledGrads = pools, grads, pooled }(foldPools, foldPoolGrads, pooledGrads)
	pooledGrads = false // TestPooledFilterGrad compares those
	for _, c := range []struct {
		convCase
		leaf, twoReaders bool
	}{
		{convCase{n: 3, c: 1, h: 12, w: 12, o: 4, k: 5, stride: 1, bias: true}, true, false},
		{convCase{n: 2, c: 3, h: 10, w: 10, o: 5, k: 3, stride: 1, bias: true}, false, false},
		{convCase{n: 2, c: 2, h: 9, w: 9, o: 3, k: 3, stride: 1, bias: true}, false, false},
		{convCase{n: 2, c: 3, h: 10, w: 10, o: 5, k: 3, stride: 1, bias: true}, false, true},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			t.Run(fmt.Sprintf("%v/two-readers=%v/%v", c.convCase, c.twoReaders, dt), func(t *testing.T) {
				build := func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
					y, err := c.conv(nodes, c.leaf)
					if err != nil {
						return nil, err
					}
					z, err := ReLUMaxPool2d(y, 2, 2, 0)
					if err != nil || !c.twoReaders {
						return z, err
					}
					z2, err := ReLUMaxPool2d(y, 2, 2, 0)
					if err != nil {
						return nil, err
					}
					return gorgonia.Add(z, z2)
				}
				ins := c.inputs(rand.New(rand.NewPCG(23, uint64(c.c))))
				wrt := []int{1, 2}
				if !c.leaf {
					wrt = []int{0, 1, 2}
				}
				var results [2][][]float64
				for i, fold := range []bool{true, false} {
					foldPools, foldPoolGrads = fold, fold
					p := newProbe(t, dt, ins, wrt, rand.New(rand.NewPCG(24, 0)), build)
					out, loss, grads := p.run(t)
					results[i] = append([][]float64{out, {loss}}, grads...)
					pools, poolGrads := 0, 0
					for _, n := range p.out.Graph().AllNodes() {
						switch op := n.Op().(type) {
						case *convOp:
							if op.pool != nil {
								pools++
							}
						case *convGradMatrix:
							if op.pool != nil {
								poolGrads++
							}
						}
					}
					want := 0
					if fold && !c.twoReaders {
						want = 1
					}
					if pools != want || poolGrads != want {
						t.Errorf("fold %v: %d pools and %d pool gradients run by the convolution, want %d", fold, pools, poolGrads, want)
					}
				}
				for k := range results[0] {
					if j := firstBitDifference(results[0][k], results[1][k]); j >= 0 {
						t.Errorf("result %d (output, loss, gradients), entry %d: %v folded, %v not", k, j, results[0][k][j], results[1][k][j])
					}
				}
			})
		}
	}
}

// TestPooledFilterGrad runs convolutions whose output feeds a ReLU and a
// 2×2 max-pool, with the gradient matrix holding the pool's gradient
// (pooledgrad.go) and holding the dense one, over three runs (new
// inputs, then new filters): LeNet's first layer on a few images (one
// channel, 9×9 filters, outputs of 28×28, no input gradient), a 5×5 one,
// one without bias whose outputs (9×9) are not a multiple of 4
// positions; and layers whose input gradient is wanted, read rows ×
// columns × channels: LeNet's second (10 channels, 20 filters of 5×5),
// one of 3 channels and 3×3 filters, one of one channel. The outputs, the
// loss and the bias's gradient are the same bits; the filters' and the
// input's gradients, summed in another order, the same within 1e-6 of
// their largest value.
func TestPooledFilterGrad(t *testing.T) {
	needAVX512(t)
	defer func(saved bool) { pooledGrads = saved }(pooledGrads)
	for _, c := range []struct {
		convCase
		leaf bool
	}{
		{convCase{n: 3, c: 1, h: 36, w: 36, o: 10, k: 9, stride: 1, bias: true}, true},
		{convCase{n: 5, c: 1, h: 12, w: 12, o: 4, k: 5, stride: 1, bias: true}, true},
		{convCase{n: 4, c: 1, h: 13, w: 13, o: 3, k: 5, stride: 1}, true},
		{convCase{n: 4, c: 10, h: 14, w: 14, o: 20, k: 5, stride: 1, bias: true}, false},
		{convCase{n: 3, c: 3, h: 12, w: 12, o: 6, k: 3, stride: 1, bias: true}, false},
		{convCase{n: 2, c: 1, h: 12, w: 12, o: 2, k: 3, stride: 1}, false},
	} {
		t.Run(c.String(), func(t *testing.T) {
			build := func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
				y, err := c.conv(nodes, c.leaf)
				if err != nil {
					return nil, err
				}
				return ReLUMaxPool2d(y, 2, 2, 0)
			}
			ins := c.inputs(rand.New(rand.NewPCG(25, uint64(c.k))))
			wrt := []int{1}
			if c.bias {
				wrt = append(wrt, 2)
			}
			if !c.leaf {
				wrt = append(wrt, 0)
			}
			probes := make([]*probe, 2)
			for i, pooled := range []bool{true, false} {
				pooledGrads = pooled
				probes[i] = newProbe(t, tensor.Float32, ins, wrt, rand.New(rand.NewPCG(26, 0)), build)
			}
			var used int
			for _, n := range probes[0].out.Graph().AllNodes() {
				if m, ok := n.Op().(*convGradMatrix); ok && m.pooledRows {
					used++
				}
			}
			if used != 1 {
				t.Fatalf("%d gradient matrices hold the pool's gradient, want 1", used)
			}
			rng := rand.New(rand.NewPCG(27, 0))
			for run, change := range []func() []float64{
				func() []float64 { return nil },
				func() []float64 { return randomInput(rng, "x", c.n, c.c, c.h, c.w).vals },
				func() []float64 { return randomInput(rng, "w", c.o, c.c, c.k, c.k).vals },
			} {
				vals := change()
				var results [2][][]float64
				for i, p := range probes {
					pooledGrads = i == 0
					switch run {
					case 1:
						setAll(p.vals[0], vals)
					case 2:
						setAll(p.vals[1], vals)
					}
					out, loss, grads := p.run(t)
					results[i] = append([][]float64{out, {loss}}, grads...)
				}
				for k := range results[0] {
					got, want := results[0][k], results[1][k]
					if k >= 2 && wrt[k-2] != 2 { // the filters' and the input's gradients
						if d := maxRelDiff(got, want); d > 1e-6 || math.IsNaN(d) {
							t.Errorf("run %d: gradient %d differs by %.3g of its largest value", run, wrt[k-2], d)
						}
						continue
					}
					if j := firstBitDifference(got, want); j >= 0 {
						t.Errorf("run %d: result %d (output, loss, gradients), entry %d: %v pooled, %v dense", run, k, j, got[j], want[j])
					}
				}
			}
		})
	}
}

// TestPooledFilterGradShared checks that the runs pooledFilterGrad takes
// together, two or three rows reading each window once, give each row's
// filter gradient the bits it has alone: five runs of a few filters in
// groups of two and three, each group's runs with the same argmaxes but
// for one run whose argmaxes differ (it must be taken alone), for
// filters of 5×5 (three rows a kernel), 9×9 (LeNet's conv1) and 12×12
// (two rows a kernel).
func TestPooledFilterGradShared(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(29, 30))
	for _, k := range []int{5, 9, 12} {
		g := geometry{n: 3, c: 1, o: 2, k: k, stride: 1, oh: 12, ow: 12}
		g.h, g.w = g.oh+k-1, g.ow+k-1
		pp := g.positions() / 4
		entries := g.n * pp
		ld := g.n * g.positions()
		x := randomMatrix(rng, g.n, g.h*g.w+64)[:g.n*g.h*g.w+64]
		for _, share := range []int{2, 3} {
			const runs = 5
			m := runs * g.o
			rows := make([]float32, m*ld)
			for run := range runs {
				for f := range g.o {
					row := rows[(run*g.o+f)*ld:]
					for e := range entries {
						row[e] = float32(rng.NormFloat64())
					}
					first := run - run%share
					if run == first || run == 3 { // run 3's argmaxes differ from its group's
						for e := range entries {
							row[entries+e] = math.Float32frombits(uint32(rng.IntN(g.positions())))
						}
						continue
					}
					copy(row[entries:entries+entries], rows[(first*g.o+f)*ld+entries:][:entries])
				}
			}
			alone, shared := make([]float32, m*g.k*g.k), make([]float32, m*g.k*g.k)
			pooledFilterGrad(g, pp, rows, ld, m, 1, x, alone, g.k*g.k)
			pooledFilterGrad(g, pp, rows, ld, m, share, x, shared, g.k*g.k)
			if j := firstBitDifference(float64s(shared), float64s(alone)); j >= 0 {
				t.Errorf("k=%d, groups of %d: row %d, tap %d: %v shared, %v alone", k, share, j/(g.k*g.k), j%(g.k*g.k), shared[j], alone[j])
			}
		}
	}
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
