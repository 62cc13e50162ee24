package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type convCase struct {
	n, c, h, w, o, k, stride, pad int
	bias                          bool
}

// convCases cover every layer shape of LeNet and ResNet-18 at a small
// size: stride 1 and 2, no padding and padding of 1 and 3, 1×1 to 9×9
// kernels, non-square inputs, and enough positions per example (36×36 with
// 9×9) that the input gradient is computed a few examples at a time.
var convCases = []convCase{
	{n: 2, c: 3, h: 9, w: 7, o: 4, k: 3, stride: 1, pad: 1, bias: true},
	{n: 3, c: 2, h: 8, w: 8, o: 5, k: 3, stride: 2, pad: 1},
	{n: 2, c: 3, h: 11, w: 10, o: 2, k: 7, stride: 2, pad: 3},
	{n: 2, c: 4, h: 6, w: 6, o: 3, k: 1, stride: 2, pad: 0},
	{n: 3, c: 1, h: 36, w: 36, o: 2, k: 9, stride: 1, pad: 0, bias: true},
	{n: 2, c: 2, h: 3, w: 3, o: 2, k: 3, stride: 1, pad: 0, bias: true},
}

func (c convCase) String() string {
	return fmt.Sprintf("%dx%dx%dx%d_o%d_k%d_s%d_p%d_bias%v", c.n, c.c, c.h, c.w, c.o, c.k, c.stride, c.pad, c.bias)
}

func (c convCase) inputs(rng *rand.Rand) []input {
	ins := []input{randomInput(rng, "x", c.n, c.c, c.h, c.w), randomInput(rng, "w", c.o, c.c, c.k, c.k)}
	if c.bias {
		ins = append(ins, randomInput(rng, "b", 1, c.o, 1, 1))
	}
	return ins
}

// ours is Conv2d on x·1 (not a leaf, so that its gradient is computed).
func (c convCase) ours(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
	return c.conv(nodes, false)
}

// conv is Conv2d of the case on nodes (x, w and, with a bias, b): on x
// itself where leaf, otherwise on x·1, whose gradient is then computed.
func (c convCase) conv(nodes []*gorgonia.Node, leaf bool) (*gorgonia.Node, error) {
	x := nodes[0]
	if !leaf {
		var err error
		if x, err = notLeaf(x); err != nil {
			return nil, err
		}
	}
	var b *gorgonia.Node
	if c.bias {
		b = nodes[2]
	}
	return Conv2d(x, nodes[1], b, c.stride, c.pad)
}

// builtin is the same with Gorgonia's Conv2d and a broadcast bias.
func (c convCase) builtin(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
	x, err := notLeaf(nodes[0])
	if err != nil {
		return nil, err
	}
	y, err := gorgonia.Conv2d(x, nodes[1], tensor.Shape{c.k, c.k}, []int{c.pad, c.pad}, []int{c.stride, c.stride}, []int{1, 1})
	if err != nil || !c.bias {
		return y, err
	}
	return gorgonia.BroadcastAdd(y, nodes[2], nil, []byte{0, 2, 3})
}

func notLeaf(x *gorgonia.Node) (*gorgonia.Node, error) {
	one := gorgonia.NewConstant(1.0)
	if x.Dtype() == tensor.Float32 {
		one = gorgonia.NewConstant(float32(1))
	}
	return gorgonia.Mul(x, one)
}

func (c convCase) wrt() []int {
	if c.bias {
		return []int{0, 1, 2}
	}
	return []int{0, 1}
}

// TestConv2dMatchesGorgonia compares the output and every gradient with
// Gorgonia's own Conv2d (+ broadcast bias), in float64, to 1e-12 of the
// largest value, on two runs of one machine with different inputs.
func TestConv2dMatchesGorgonia(t *testing.T) {
	for _, c := range convCases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(c.h*100+c.k)))
			ins := c.inputs(rng)
			ours := newProbe(t, tensor.Float64, ins, c.wrt(), rand.New(rand.NewPCG(2, 0)), c.ours)
			ref := newProbe(t, tensor.Float64, ins, c.wrt(), rand.New(rand.NewPCG(2, 0)), c.builtin)
			for run := range 2 {
				if run == 1 { // new values for every input of both graphs
					for i, in := range c.inputs(rng) {
						setAll(ours.vals[i], in.vals)
						setAll(ref.vals[i], in.vals)
					}
				}
				out, _, grads := ours.run(t)
				wantOut, _, wantGrads := ref.run(t)
				if d := maxRelDiff(out, wantOut); d > 1e-12 {
					t.Errorf("run %d: output differs by %.3g", run, d)
				}
				for k, i := range c.wrt() {
					if d := maxRelDiff(grads[k], wantGrads[k]); d > 1e-12 {
						t.Errorf("run %d: gradient of %s differs by %.3g", run, ins[i].name, d)
					}
				}
			}
		})
	}
}

// TestConv2dFiniteDifferences checks the gradients against central
// differences of the loss, independently of Gorgonia's Conv2d.
func TestConv2dFiniteDifferences(t *testing.T) {
	for _, c := range convCases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(c.h*100+c.k)))
			p := newProbe(t, tensor.Float64, c.inputs(rng), c.wrt(), rng, c.ours)
			fdCheck(t, p, c.wrt(), rng)
		})
	}
}

// TestConv2dForwardOnly checks the forward pass of a graph that is never
// differentiated (it does not keep the batch's patches and works a few
// examples at a time) against Gorgonia's Conv2d, and float32 against
// float64 to 1e-5 relative.
func TestConv2dForwardOnly(t *testing.T) {
	for _, c := range convCases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, uint64(c.h*100+c.k)))
			ins := c.inputs(rng)
			out, _, _ := newProbe(t, tensor.Float64, ins, nil, rng, c.ours).run(t)
			want, _, _ := newProbe(t, tensor.Float64, ins, nil, rng, c.builtin).run(t)
			if d := maxRelDiff(out, want); d > 1e-12 {
				t.Errorf("float64 output differs from Gorgonia's by %.3g", d)
			}
			out32, _, _ := newProbe(t, tensor.Float32, ins, nil, rng, c.ours).run(t)
			if d := maxRelDiff(out32, want); d > 1e-5 {
				t.Errorf("float32 output differs from float64 by %.3g", d)
			}
		})
	}
}

func TestConv2dRejectsBadShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(2, 3, 8, 8), gorgonia.WithName("x"))
	for _, tc := range []struct {
		w           []int
		stride, pad int
	}{
		{w: []int{4, 2, 3, 3}, stride: 1}, // channels differ
		{w: []int{4, 3, 3, 2}, stride: 1}, // not square
		{w: []int{4, 3, 9, 9}, stride: 1}, // larger than the input
		{w: []int{4, 3, 3, 3}, stride: 0}, // stride 0
		{w: []int{4, 3, 3, 3}, stride: 1, pad: -1},
	} {
		w := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(tc.w...), gorgonia.WithName(fmt.Sprint(tc)))
		if _, err := Conv2d(x, w, nil, tc.stride, tc.pad); err == nil {
			t.Errorf("filters %v, stride %d, padding %d: no error", tc.w, tc.stride, tc.pad)
		}
	}
}

// TestConv2dLeafInput covers a convolution of a leaf (the images): no
// input gradient, and patches reused while the input's values stay the
// same. Three runs of one machine against Gorgonia's Conv2d: new filters
// with the same input (patches reused), then a new input, then one value
// of the input changed back and forth (each change must be seen).
func TestConv2dLeafInput(t *testing.T) {
	c := convCases[0]
	var b func(nodes []*gorgonia.Node) *gorgonia.Node
	if c.bias {
		b = func(nodes []*gorgonia.Node) *gorgonia.Node { return nodes[2] }
	} else {
		b = func([]*gorgonia.Node) *gorgonia.Node { return nil }
	}
	oursLeaf := func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
		return Conv2d(nodes[0], nodes[1], b(nodes), c.stride, c.pad)
	}
	refLeaf := func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
		y, err := gorgonia.Conv2d(nodes[0], nodes[1], tensor.Shape{c.k, c.k}, []int{c.pad, c.pad}, []int{c.stride, c.stride}, []int{1, 1})
		if err != nil || !c.bias {
			return y, err
		}
		return gorgonia.BroadcastAdd(y, b(nodes), nil, []byte{0, 2, 3})
	}
	rng := rand.New(rand.NewPCG(13, 0))
	ins := c.inputs(rng)
	wrt := []int{1, 2}
	ours := newProbe(t, tensor.Float64, ins, wrt, rand.New(rand.NewPCG(14, 0)), oursLeaf)
	ref := newProbe(t, tensor.Float64, ins, wrt, rand.New(rand.NewPCG(14, 0)), refLeaf)
	set := func(i int, vals []float64) {
		setAll(ours.vals[i], vals)
		setAll(ref.vals[i], vals)
	}
	x := ins[0].vals
	for run, change := range []func(){
		func() {},
		func() { set(1, randomInput(rng, "w", c.o, c.c, c.k, c.k).vals) },
		func() { x = randomInput(rng, "x", c.n, c.c, c.h, c.w).vals; set(0, x) },
		func() { x[7] += 1; set(0, x) },
		func() { x[7] -= 1; set(0, x) },
	} {
		change()
		out, _, grads := ours.run(t)
		wantOut, _, wantGrads := ref.run(t)
		if d := maxRelDiff(out, wantOut); d > 1e-12 {
			t.Errorf("run %d: output differs by %.3g", run, d)
		}
		for k := range wrt {
			if d := maxRelDiff(grads[k], wantGrads[k]); d > 1e-12 {
				t.Errorf("run %d: gradient %d differs by %.3g", run, k, d)
			}
		}
	}
}

// BenchmarkCol2im times col2im, and BenchmarkIm2col im2col, on the
// shapes the LeNet and ResNet-18 steps give them most (one chunk of
// examples each), reporting the patch values read or written per second.
func BenchmarkCol2im(b *testing.B) { benchPatches(b, true) }

func BenchmarkIm2col(b *testing.B) { benchPatches(b, false) }

func benchPatches(b *testing.B, back bool) {
	for _, c := range []struct {
		name string
		g    geometry
	}{
		{"lenet-conv1", geometry{n: 10, c: 1, h: 36, w: 36, o: 10, k: 9, stride: 1}},
		{"lenet-conv2", geometry{n: 10, c: 10, h: 14, w: 14, o: 20, k: 5, stride: 1}},
		{"resnet-layer1", geometry{n: 4, c: 64, h: 16, w: 16, o: 64, k: 3, stride: 1, pad: 1}},
		{"resnet-layer2-down", geometry{n: 4, c: 64, h: 16, w: 16, o: 128, k: 3, stride: 2, pad: 1}},
		{"resnet-layer2", geometry{n: 16, c: 128, h: 8, w: 8, o: 128, k: 3, stride: 1, pad: 1}},
		{"resnet-layer3", geometry{n: 64, c: 256, h: 4, w: 4, o: 256, k: 3, stride: 1, pad: 1}},
		{"resnet-layer4", geometry{n: 64, c: 512, h: 2, w: 2, o: 512, k: 3, stride: 1, pad: 1}},
	} {
		g := c.g
		g.oh = (g.h+2*g.pad-g.k)/g.stride + 1
		g.ow = (g.w+2*g.pad-g.k)/g.stride + 1
		cols := make([]float32, g.rows()*g.n*g.positions())
		for i := range cols {
			cols[i] = float32(i%13) - 6
		}
		x := make([]float32, g.n*g.c*g.h*g.w)
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if back {
					col2im(g, cols, g.n*g.positions(), 0, g.n, x)
				} else {
					im2col(g, x, 0, g.n, cols, g.n*g.positions())
				}
			}
			b.ReportMetric(float64(len(cols))*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gvalues/s")
		})
	}
}

// BenchmarkCol2imClearing times col2im as LeNet's second layer runs it in
// the step: the patches' gradient cleared as it is read
// (asm.AddRunsClearingFloat32), reporting patch values read per second.
func BenchmarkCol2imClearing(b *testing.B) {
	g := geometry{n: 10, c: 10, h: 14, w: 14, o: 20, k: 5, stride: 1, oh: 10, ow: 10}
	cols := make([]float32, g.rows()*g.n*g.positions())
	x := make([]float32, g.n*g.c*g.h*g.w)
	taps := tapsOf(g)
	for range b.N {
		col2imRuns(g, taps, cols, g.n*g.positions(), 0, g.n, x, true)
	}
	b.ReportMetric(float64(len(cols))*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gvalues/s")
}

// TestChunkedPatchesChangeLittle checks that making a differentiated
// convolution's patches a chunk at a time (chunkKeptPatches) gives the
// output and gradients of the whole batch's patches and one product, to
// the rounding of the products' other order of sums: 1e-13 of the largest
// value in float64, 1e-6 in float32. The cases are LeNet's second layer
// (three chunks of 10 examples) and a padded layer whose last chunk is
// short (16 and 4 examples).
func TestChunkedPatchesChangeLittle(t *testing.T) {
	defer func(saved bool) { chunkKeptPatches = saved }(chunkKeptPatches)
	for _, c := range []convCase{
		{n: 30, c: 10, h: 14, w: 14, o: 20, k: 5, stride: 1, bias: true},
		{n: 20, c: 4, h: 8, w: 8, o: 6, k: 3, stride: 1, pad: 1},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%v/%v", c, dt), func(t *testing.T) {
				ins := c.inputs(rand.New(rand.NewPCG(5, uint64(c.n))))
				results := make([][][]float64, 2)
				for i, chunked := range []bool{false, true} {
					chunkKeptPatches = chunked
					p := newProbe(t, dt, ins, c.wrt(), rand.New(rand.NewPCG(6, 0)), c.ours)
					out, _, grads := p.run(t)
					results[i] = append([][]float64{out}, grads...)
				}
				tol := 1e-13
				if dt == tensor.Float32 {
					tol = 1e-6
				}
				for k := range results[0] {
					if d := maxRelDiff(results[1][k], results[0][k]); d > tol {
						t.Errorf("result %d (0 the output, then the gradients) differs by %.3g of its largest value, want at most %g", k, d, tol)
					}
				}
			})
		}
	}
}
