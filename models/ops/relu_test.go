package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestReLUOpsMatchGorgonia compares ReLU, AddReLU and GlobalAvgPool with
// Gorgonia's Rectify, Add + Rectify and Reshape + Mean: outputs and
// gradients on two runs of one machine (the second on new inputs, so that
// the ops' reused buffers are checked), to 1e-12 (the mean sums in
// another order), and the gradients with central differences.
func TestReLUOpsMatchGorgonia(t *testing.T) {
	shape := []int{3, 2, 4, 5}
	for _, tc := range []struct {
		name      string
		inputs    int
		ours, ref func([]*gorgonia.Node) (*gorgonia.Node, error)
	}{
		{"ReLU", 1, func(n []*gorgonia.Node) (*gorgonia.Node, error) { return ReLU(n[0]) }, func(n []*gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Rectify(n[0]) }},
		{"AddReLU", 2, func(n []*gorgonia.Node) (*gorgonia.Node, error) { return AddReLU(n[0], n[1]) }, func(n []*gorgonia.Node) (*gorgonia.Node, error) {
			s, err := gorgonia.Add(n[0], n[1])
			if err != nil {
				return nil, err
			}
			return gorgonia.Rectify(s)
		}},
		{"GlobalAvgPool", 1, func(n []*gorgonia.Node) (*gorgonia.Node, error) { return GlobalAvgPool(n[0]) }, func(n []*gorgonia.Node) (*gorgonia.Node, error) {
			r, err := gorgonia.Reshape(n[0], tensor.Shape{shape[0], shape[1], shape[2] * shape[3]})
			if err != nil {
				return nil, err
			}
			return gorgonia.Mean(r, 2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(tc.inputs)))
			var ins []input
			var wrt []int
			for i := range tc.inputs {
				ins = append(ins, randomInput(rng, string(rune('a'+i)), shape...))
				wrt = append(wrt, i)
			}
			// The ops take non-leaf inputs in the networks.
			wrap := func(f func([]*gorgonia.Node) (*gorgonia.Node, error)) func([]*gorgonia.Node) (*gorgonia.Node, error) {
				return func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
					inner := make([]*gorgonia.Node, len(nodes))
					for i, n := range nodes {
						var err error
						if inner[i], err = notLeaf(n); err != nil {
							return nil, err
						}
					}
					return f(inner)
				}
			}
			ours := newProbe(t, tensor.Float64, ins, wrt, rand.New(rand.NewPCG(12, 0)), wrap(tc.ours))
			ref := newProbe(t, tensor.Float64, ins, wrt, rand.New(rand.NewPCG(12, 0)), wrap(tc.ref))
			for run := range 2 {
				if run == 1 {
					for i := range ins {
						in := randomInput(rng, "x", shape...)
						setAll(ours.vals[i], in.vals)
						setAll(ref.vals[i], in.vals)
					}
				}
				out, _, grads := ours.run(t)
				wantOut, _, wantGrads := ref.run(t)
				if d := maxRelDiff(out, wantOut); d > 1e-12 {
					t.Errorf("run %d: output differs by %.3g", run, d)
				}
				for i := range wrt {
					if d := maxRelDiff(grads[i], wantGrads[i]); d > 1e-12 {
						t.Errorf("run %d: gradient %d differs by %.3g", run, i, d)
					}
				}
			}
			fdCheck(t, ours, wrt, rng)
		})
	}
}

func TestAddReLURejectsShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	a := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(1, 2, 3, 3), gorgonia.WithName("a"))
	b := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(1, 2, 3, 4), gorgonia.WithName("b"))
	if _, err := AddReLU(a, b); err == nil {
		t.Error("shapes (1,2,3,3) and (1,2,3,4): no error")
	}
	if _, err := GlobalAvgPool(gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("m"))); err == nil {
		t.Error("a matrix: no error")
	}
}

// TestAvgPoolWindows checks the 2×2 average pool of a (2, 3, 4, 6) input
// against the windows' means summed here value by value, to 1e-12, its
// gradient with central differences, and that a window equal to the
// plane gives GlobalAvgPool's output.
func TestAvgPoolWindows(t *testing.T) {
	const n, c, h, w, k = 2, 3, 4, 6, 2
	rng := rand.New(rand.NewPCG(13, 0))
	in := randomInput(rng, "x", n, c, h, w)
	p := newProbe(t, tensor.Float64, []input{in}, []int{0}, rand.New(rand.NewPCG(14, 0)), func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
		x, err := notLeaf(nodes[0])
		if err != nil {
			return nil, err
		}
		return AvgPool(x, k)
	})
	out, _, _ := p.run(t)
	if len(out) != n*c*(h/k)*(w/k) {
		t.Fatalf("%d outputs, want %d", len(out), n*c*(h/k)*(w/k))
	}
	for i := range n {
		for ch := range c {
			for oy := range h / k {
				for ox := range w / k {
					var want float64
					for dy := range k {
						for dx := range k {
							want += in.vals[((i*c+ch)*h+oy*k+dy)*w+ox*k+dx] / (k * k)
						}
					}
					// PyTorch's view(batch, -1): channel, then row, then column.
					got := out[i*c*(h/k)*(w/k)+(ch*(h/k)+oy)*(w/k)+ox]
					if math.Abs(got-want) > 1e-12 {
						t.Fatalf("example %d channel %d window (%d,%d): %g, want %g", i, ch, oy, ox, got, want)
					}
				}
			}
		}
	}
	fdCheck(t, p, []int{0}, rng)

	sq := randomInput(rng, "s", n, c, 4, 4)
	whole := func(f func(*gorgonia.Node) (*gorgonia.Node, error)) []float64 {
		q := newProbe(t, tensor.Float64, []input{sq}, []int{0}, rand.New(rand.NewPCG(15, 0)), func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
			x, err := notLeaf(nodes[0])
			if err != nil {
				return nil, err
			}
			return f(x)
		})
		o, _, _ := q.run(t)
		return o
	}
	a := whole(func(x *gorgonia.Node) (*gorgonia.Node, error) { return AvgPool(x, 4) })
	b := whole(GlobalAvgPool)
	if d := maxRelDiff(a, b); d > 1e-12 {
		t.Errorf("4×4 pool of a 4×4 plane differs from the global pool by %.3g", d)
	}
	g := gorgonia.NewGraph()
	odd := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(1, 2, 6, 6), gorgonia.WithName("odd"))
	if _, err := AvgPool(odd, 4); err == nil {
		t.Error("a 4×4 pool of 6×6 planes: no error")
	}
}
