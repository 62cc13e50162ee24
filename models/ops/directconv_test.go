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

// randomTapGeometry is a geometry whose products read taps from the
// input (readsTaps): stride 1, no padding, output rows of 17 to 32.
func randomTapGeometry(rng *rand.Rand) geometry {
	k := 1 + rng.IntN(9)
	ow := tapsMinRow + rng.IntN(asm.MaxTapRow-tapsMinRow+1)
	oh := 1 + rng.IntN(30)
	g := geometry{n: 1 + rng.IntN(9), c: 1 + rng.IntN(3), o: 1 + rng.IntN(12), k: k, stride: 1, h: oh + k - 1, w: ow + k - 1, oh: oh, ow: ow}
	return g
}

func (g geometry) String() string {
	return fmt.Sprintf("n=%d c=%d %d×%d, %d filters %d×%d", g.n, g.c, g.h, g.w, g.o, g.k, g.k)
}

// TestTapsMatchPatches checks tapForward against asm.GemmRows over the
// patches im2col makes, bit for bit, on 40 seeded geometries with up to
// 23 rows of filters (stacked particles), so every kernel from one row
// to ten is met.
func TestTapsMatchPatches(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(9, 1))
	for range 40 {
		g := randomTapGeometry(rng)
		if !readsTaps(g) {
			t.Fatalf("%v: not read from taps", g)
		}
		m, rows, np := 1+rng.IntN(23), g.rows(), g.n*g.positions()
		x := randomMatrix(rng, g.n*g.c, g.h*g.w)
		w := randomMatrix(rng, m, rows)
		patches := make([]float32, rows*np)
		im2col(g, x, 0, g.n, patches, np)
		want := make([]float32, m*np)
		asm.GemmRows(m, np, rows, w, rows, patches, np, false, want, np)
		got := make([]float32, m*np)
		tapForward(g, tapOffsets(g), x, w, m, got, np, 0, g.n)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v, %d rows: entry (%d, %d) %v, from the patches %v", g, m, i/np, i%np, got[i], want[i])
			}
		}
	}
}

// TestTapFilterGrad checks tapFilterGrad on 40 seeded geometries against
// the filter gradient summed in float64 from the patches, within the
// bound of TestOwnKernelsMatchReference (k the batch's positions), and
// that a product of some of its rows gives those rows' bits (stacking).
func TestTapFilterGrad(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(9, 2))
	for range 40 {
		g := randomTapGeometry(rng)
		m, rows, np := 1+rng.IntN(13), g.rows(), g.n*g.positions()
		x := randomMatrix(rng, g.n*g.c, g.h*g.w)
		gm := randomMatrix(rng, m, np)
		patches := make([]float32, rows*np)
		im2col(g, x, 0, g.n, patches, np)
		offs := tapOffsets(g)
		dw := make([]float32, m*rows)
		tapFilterGrad(g, offs, gm, np, x, m, dw, rows, new(scratch[float32]))
		gamma := sumBound(np + 1)
		for r := range m {
			for tp := range rows {
				sum, abs := 0.0, 0.0
				for q := range np {
					v := float64(gm[r*np+q]) * float64(patches[tp*np+q])
					sum += v
					abs += math.Abs(v)
				}
				if d := math.Abs(float64(dw[r*rows+tp]) - sum); d > gamma*abs {
					t.Fatalf("%v: dw[%d, %d] = %v, want %v (error %.3g > bound %.3g)", g, r, tp, dw[r*rows+tp], sum, d, gamma*abs)
				}
			}
		}
		r0 := rng.IntN(m)
		r1 := r0 + 1 + rng.IntN(m-r0)
		some := make([]float32, (r1-r0)*rows)
		tapFilterGrad(g, offs, gm[r0*np:], np, x, r1-r0, some, rows, new(scratch[float32]))
		for i := range some {
			if got, want := some[i], dw[r0*rows+i]; math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%v: rows [%d, %d) alone: entry %d %v, with all %d rows %v", g, r0, r1, i, got, m, want)
			}
		}
	}
}

// TestTapInputGrad checks tapInputGrad on 40 seeded geometries (up to
// asm.MaxBackFilters filters, so that every kernel's eight-tap and one-tap
// loops and masked last vectors are met) against col2im of wᵀ·G summed
// in float64, within the bound of TestTapFilterGrad for sums of
// o·k·k products, over two runs of the same state (the planes must be
// left cleared).
func TestTapInputGrad(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(9, 3))
	for range 40 {
		g := randomTapGeometry(rng)
		g.o = 1 + rng.IntN(asm.MaxBackFilters)
		if !tapsBack(g) {
			t.Fatalf("%v: input gradient not read back into planes", g)
		}
		rows, np := g.rows(), g.n*g.positions()
		var st convState[float32]
		for run := range 2 {
			w := randomMatrix(rng, g.o, rows)
			gm := randomMatrix(rng, g.o, np)
			dcols := make([]float64, rows*np)
			abs := make([]float64, rows*np)
			for tp := range rows {
				for q := range np {
					for f := range g.o {
						v := float64(w[f*rows+tp]) * float64(gm[f*np+q])
						dcols[tp*np+q] += v
						abs[tp*np+q] += math.Abs(v)
					}
				}
			}
			want := make([]float64, g.n*g.c*g.h*g.w)
			bound := make([]float64, len(want))
			col2im(g, dcols, np, 0, g.n, want)
			col2im(g, abs, np, 0, g.n, bound)
			got := make([]float32, len(want))
			tapInputGrad(g, &st, w, gm, np, got)
			gamma := sumBound(g.o*g.k*g.k + 1)
			for i := range want {
				if d := math.Abs(float64(got[i]) - want[i]); d > gamma*bound[i] || math.IsNaN(float64(got[i])) {
					t.Fatalf("%v, %d filters, run %d: dx[%d] = %v, want %v (error %.3g > bound %.3g)", g, g.o, run, i, got[i], want[i], d, gamma*bound[i])
				}
			}
		}
	}
}

// TestTapsChangeLittle runs convolutions whose products read the input
// (readsTaps) and the same ones over patches, over three runs (new
// inputs, then new filters: the kept copy of the input must follow
// them): a leaf input of one channel with rows of 18 (two vectors) and
// an input that is not a leaf, whose gradient is wanted too, of three
// channels with rows of 10 (one vector, four rows at a time). The
// outputs are the same bits, the gradients the same within 1e-6 of
// their largest value (float32 sums grouped otherwise,
// TestTapFilterGrad).
func TestTapsChangeLittle(t *testing.T) {
	needAVX512(t)
	defer func(saved bool) { tappedPatches = saved }(tappedPatches)
	for _, c := range []struct {
		convCase
		leaf bool
	}{
		{convCase{n: 6, c: 1, h: 26, w: 26, o: 10, k: 9, stride: 1, bias: true}, true},
		{convCase{n: 5, c: 3, h: 14, w: 14, o: 7, k: 5, stride: 1, bias: true}, false},
	} {
		t.Run(c.String(), func(t *testing.T) {
			oh := c.h - c.k + 1
			tappedPatches = true
			if !readsTaps(geometry{c: c.c, h: c.h, w: c.w, k: c.k, stride: 1, oh: oh, ow: c.w - c.k + 1}) {
				t.Fatal("the case's products would not read their input")
			}
			build := func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
				return c.conv(nodes, c.leaf)
			}
			rng := rand.New(rand.NewPCG(15, uint64(c.c)))
			ins := c.inputs(rng)
			wrt := []int{1, 2}
			if !c.leaf {
				wrt = []int{0, 1, 2}
			}
			probes := make([]*probe, 2)
			for i, tapped := range []bool{true, false} {
				tappedPatches = tapped
				probes[i] = newProbe(t, tensor.Float32, ins, wrt, rand.New(rand.NewPCG(16, 0)), build)
			}
			for run, change := range []func() []float64{
				func() []float64 { return nil },
				func() []float64 { return randomInput(rng, "x", c.n, c.c, c.h, c.w).vals },
				func() []float64 { return randomInput(rng, "w", c.o, c.c, c.k, c.k).vals },
			} {
				vals := change()
				results := make([][][]float64, 2)
				for i, tapped := range []bool{true, false} {
					tappedPatches = tapped
					switch run {
					case 1:
						setAll(probes[i].vals[0], vals)
					case 2:
						setAll(probes[i].vals[1], vals)
					}
					out, _, grads := probes[i].run(t)
					results[i] = append([][]float64{out}, grads...)
				}
				for j, v := range results[0][0] {
					if w := results[1][0][j]; math.Float32bits(float32(v)) != math.Float32bits(float32(w)) {
						t.Fatalf("run %d: output %d is %v read from the input, %v from the patches", run, j, v, w)
					}
				}
				for k := 1; k < len(results[0]); k++ {
					if d := maxRelDiff(results[0][k], results[1][k]); d > 1e-6 {
						t.Errorf("run %d: gradient %d differs by %.3g of its largest value", run, k, d)
					}
				}
			}
		})
	}
}
