package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// ReLU adds max(0, x) to x's graph. Its gradient passes the output's
// where the output is positive.
func ReLU(x *gorgonia.Node) (*gorgonia.Node, error) {
	return apply(&reluOp{base: newBase("ReLU", x.Dims(), x.Dims()), size: x.Shape().TotalSize()}, x)
}

// AddReLU adds max(0, a + b) to a's graph, a and b of one shape: a
// residual block's sum and activation in one op. The gradient with
// respect to a and to b is the one ReLU's gives x.
func AddReLU(a, b *gorgonia.Node) (*gorgonia.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("add of shapes %v and %v", a.Shape(), b.Shape())
	}
	return apply(&reluOp{base: newBase("AddReLU", a.Dims(), a.Dims(), a.Dims()), add: true, size: a.Shape().TotalSize()}, a, b)
}

// reluOp is ReLU of its input, or of the sum of its two inputs.
type reluOp struct {
	base
	gpu  onGPU // on a device: see deviceDo
	add  bool
	size int     // the output's number of values
	twin *reluOp // the recorded op this one replays (see Record)
	out  buffer
}

func (op *reluOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

func (op *reluOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, reluCPU[float32], reluCPU[float64])
}

func (op *reluOp) replayed() (gorgonia.Value, bool) {
	if op.twin == nil {
		return nil, false
	}
	return op.twin.out.t, true
}

// reluCPU is reluOp's run on the CPU in T.
func reluCPU[T float](op *reluOp, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(x.Dtype(), false, x.Shape()...)
	var y gorgonia.Value
	if op.add {
		y = vals[1]
	}
	reluForward(data[T](x), biasData[T](y), data[T](out))
	return out, nil
}

// reluForward sets out = max(0, x + y), y nil meaning 0.
func reluForward[T float](x, y, out []T) {
	if y == nil {
		for i, v := range x {
			out[i] = max(v, 0)
		}
		return
	}
	y = y[:len(x)]
	for i, v := range x {
		out[i] = max(v+y[i], 0)
	}
}

func (op *reluOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

// SymDiff reads the output's sign from the output node, which a replay
// shares with its recorded op.
func (op *reluOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(&reluGrad{base: op.derive(op.name+"∂x", output.Dims(), grad.Dims(), output.Dims())}, output, grad)
	if err != nil {
		return nil, err
	}
	if op.add {
		return gorgonia.Nodes{dx, dx}, nil
	}
	return gorgonia.Nodes{dx}, nil
}

func (op *reluOp) replay(recorded gorgonia.Op) error {
	r, ok := recorded.(*reluOp)
	if !ok || r.add != op.add {
		return fmt.Errorf("ops: %v cannot replay %v", op, recorded)
	}
	op.twin = r
	return nil
}

// reluGrad is the gradient g where the output y is positive, else 0.
type reluGrad struct {
	base
	gpu onGPU // on a device: see deviceDo
	out buffer
}

func (op *reluGrad) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

func (op *reluGrad) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, reluGradCPU[float32], reluGradCPU[float64])
}

// reluGradCPU is reluGrad's run on the CPU in T.
func reluGradCPU[T float](op *reluGrad, y *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(y.Dtype(), false, y.Shape()...)
	reluBackward(data[T](y), vals[1].Data().([]T), data[T](out))
	return out, nil
}

func reluBackward[T float](y, g, dx []T) {
	if y32, ok := any(y).([]float32); ok {
		g32, dx32 := any(g).([]float32), any(dx).([]float32)
		shareRange(len(y32), len(y32), func(lo, hi int) {
			asm.ReLUGradFloat32(y32[lo:hi], g32[lo:hi], dx32[lo:hi])
		})
		return
	}
	g = g[:len(y)]
	for i, v := range y {
		if v > 0 {
			dx[i] = g[i]
		} else {
			dx[i] = 0
		}
	}
}

// GlobalAvgPool adds the mean over each plane of x (batch, C, H, W) to
// x's graph: the result is (batch, C).
func GlobalAvgPool(x *gorgonia.Node) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("global average pool of shape %v, want (batch, C, H, W)", s)
	}
	return apply(&avgPoolOp{base: newBase("GlobalAvgPool", 4, 2), shape: s.Clone(), kh: s[2], kw: s[3]}, x)
}

// AvgPool adds the k×k average pool with stride k of x (batch, C, H, W),
// H and W multiples of k, to x's graph, flattened per example as
// PyTorch's avg_pool2d(x, k).view(batch, -1): the result is (batch,
// C·(H/k)·(W/k)), channel by channel, each channel's windows row by row.
// With k = H = W it is GlobalAvgPool.
func AvgPool(x *gorgonia.Node, k int) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 || k < 1 || s[2]%k != 0 || s[3]%k != 0 {
		return nil, fmt.Errorf("%d×%d average pool of shape %v, want (batch, C, H, W) with H and W multiples of %d", k, k, s, k)
	}
	return apply(&avgPoolOp{base: newBase("AvgPool", 4, 2), shape: s.Clone(), kh: k, kw: k}, x)
}

// avgPoolOp is the average pool over kh×kw windows with their own size
// as stride; windows the size of the plane make the global pool.
type avgPoolOp struct {
	base
	gpu    onGPU        // on a device: see deviceDo
	shape  tensor.Shape // the input's
	kh, kw int
	twin   *avgPoolOp
	out    buffer
}

// global reports whether the op is the global average pool.
func (op *avgPoolOp) global() bool { return op.kh == op.shape[2] && op.kw == op.shape[3] }

// features is the width of the output per example.
func (op *avgPoolOp) features() int {
	return op.shape[1] * (op.shape[2] / op.kh) * (op.shape[3] / op.kw)
}

func (op *avgPoolOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.shape[0], op.features()}, nil
}

func (op *avgPoolOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, avgPoolCPU[float32], avgPoolCPU[float64])
}

func (op *avgPoolOp) replayed() (gorgonia.Value, bool) {
	if op.twin == nil {
		return nil, false
	}
	return op.twin.out.t, true
}

// avgPoolCPU is avgPoolOp's run on the CPU in T.
func avgPoolCPU[T float](op *avgPoolOp, x *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(x.Dtype(), false, op.shape[0], op.features())
	if op.global() {
		planeMeans(data[T](x), op.shape[2]*op.shape[3], data[T](out))
	} else {
		windowMeans(data[T](x), op.shape[2], op.shape[3], op.kh, op.kw, data[T](out))
	}
	return out, nil
}

func planeMeans[T float](x []T, hw int, out []T) {
	for p := range out {
		out[p] = T(mean(x[p*hw : (p+1)*hw]))
	}
}

// windowMeans is the mean of each kh×kw window of the h×w planes of x.
func windowMeans[T float](x []T, h, w, kh, kw int, out []T) {
	oh, ow := h/kh, w/kw
	for p := range len(x) / (h * w) {
		plane := x[p*h*w : (p+1)*h*w]
		for oy := range oh {
			for ox := range ow {
				var s float64
				for y := oy * kh; y < (oy+1)*kh; y++ {
					for _, v := range plane[y*w+ox*kw : y*w+(ox+1)*kw] {
						s += float64(v)
					}
				}
				out[(p*oh+oy)*ow+ox] = T(s / float64(kh*kw))
			}
		}
	}
}

func (op *avgPoolOp) DiffWRT(int) []bool { return []bool{true} }

func (op *avgPoolOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	dx, err := gorgonia.ApplyOp(&avgPoolGrad{base: op.derive(op.name+"∂x", 2, 4), shape: op.shape, kh: op.kh, kw: op.kw}, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}

func (op *avgPoolOp) replay(recorded gorgonia.Op) error {
	r, ok := recorded.(*avgPoolOp)
	if !ok || !r.shape.Eq(op.shape) || r.kh != op.kh || r.kw != op.kw {
		return fmt.Errorf("ops: %v cannot replay %v", op, recorded)
	}
	op.twin = r
	return nil
}

// avgPoolGrad spreads each window's gradient evenly over the window.
type avgPoolGrad struct {
	base
	gpu    onGPU // on a device: see deviceDo
	shape  tensor.Shape
	kh, kw int
	out    buffer
}

func (op *avgPoolGrad) global() bool { return op.kh == op.shape[2] && op.kw == op.shape[3] }

func (op *avgPoolGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *avgPoolGrad) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, avgPoolGradCPU[float32], avgPoolGradCPU[float64])
}

// avgPoolGradCPU is avgPoolGrad's run on the CPU in T.
func avgPoolGradCPU[T float](op *avgPoolGrad, g *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(g.Dtype(), false, op.shape...)
	if op.global() {
		spread(data[T](g), op.shape[2]*op.shape[3], data[T](out))
	} else {
		spreadWindows(data[T](g), op.shape[2], op.shape[3], op.kh, op.kw, data[T](out))
	}
	return out, nil
}

func spread[T float](g []T, hw int, dx []T) {
	for p, v := range g {
		v /= T(hw)
		for i := range hw {
			dx[p*hw+i] = v
		}
	}
}

// spreadWindows gives each value of a kh×kw window of the h×w planes of
// dx its window's gradient over kh·kw.
func spreadWindows[T float](g []T, h, w, kh, kw int, dx []T) {
	oh, ow := h/kh, w/kw
	for p := range len(dx) / (h * w) {
		for y := range h {
			for x := range w {
				dx[(p*h+y)*w+x] = g[(p*oh+y/kh)*ow+x/kw] / T(kh*kw)
			}
		}
	}
}
