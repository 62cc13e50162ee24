package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// ReLUMaxPool2d adds max(0, ·) followed by k×k max-pooling with stride
// and padding pad to x's graph (x: batch, C, H, W): the output is
// (batch, C, OH, OW), OH = (H + 2·pad − k)/stride + 1, each value the
// ReLU of its window's maximum. ReLU and max commute, so this is
// MaxPool2d(ReLU(x)) in either order, and a padded position (never the
// window's only position) acts as 0 or −∞ alike.
//
// The op keeps each output's argmax for the gradient, which goes to that
// one input (the first maximum of the window) where the output is
// positive.
func ReLUMaxPool2d(x *gorgonia.Node, k, stride, pad int) (*gorgonia.Node, error) {
	s := x.Shape()
	if len(s) != 4 {
		return nil, fmt.Errorf("max-pool of shape %v, want (batch, C, H, W)", s)
	}
	if k < 1 || stride < 1 || pad < 0 || 2*pad > k || s[2]+2*pad < k || s[3]+2*pad < k {
		return nil, fmt.Errorf("max-pool: %d×%d window, stride %d, padding %d on %d×%d", k, k, stride, pad, s[2], s[3])
	}
	g := geometry{n: s[0], c: s[1], h: s[2], w: s[3], o: s[1], k: k, stride: stride, pad: pad}
	g.oh = (g.h+2*pad-k)/stride + 1
	g.ow = (g.w+2*pad-k)/stride + 1
	op := &poolOp{base: newBase(fmt.Sprintf("ReLUMaxPool(k=%d,s=%d,p=%d)", k, stride, pad), 4, 4), g: g}
	y, err := apply(op, x)
	if err != nil {
		return nil, err
	}
	if c, ok := x.Op().(*convOp); ok && foldPools && c.pool == nil && c.twin == nil && op.twin == nil && c.dev == nil && op.dev == nil {
		// A convolution's output read by this pool (LeNet's layers): the
		// convolution runs the pool, plane by plane, and the output is
		// never written whole, unless at its first run the graph has
		// another reader of it (convOp.Do).
		c.pool, c.outNode, c.poolNode, op.folded = op, x, y, true
	}
	return y, nil
}

// poolOp is ReLU followed by max-pooling.
type poolOp struct {
	base
	gpu    onGPU // on a device: see deviceDo
	g      geometry
	argmax []int32 // per output: the index of its input within the plane, −1 if the output is 0
	// grads is set when the op is differentiated: only then are the
	// argmaxes needed (a forward-only graph, as prediction's, skips them).
	grads bool
	twin  *poolOp // the recorded op this one replays (see Record)
	out   buffer
	// folded is set when the convolution whose output the op reads runs
	// it in its own run (convOp's pool), the output never written.
	folded bool
}

func (op *poolOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.g.n, op.g.c, op.g.oh, op.g.ow}, nil
}

func (op *poolOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, poolCPU[float32], poolCPU[float64])
}

func (op *poolOp) replayed() (gorgonia.Value, bool) {
	if op.twin == nil {
		return nil, false
	}
	return op.twin.out.t, true
}

// poolCPU is poolOp's run on the CPU in T.
func poolCPU[T float](op *poolOp, x *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	g := op.g
	out := op.out.get(x.Dtype(), false, g.n, g.c, g.oh, g.ow)
	if op.folded {
		return out, nil // the convolution whose output x is ran it
	}
	poolPlanes(g, data[T](x), data[T](out), op.argmaxes(x.Dtype()))
	return out, nil
}

// poolPlanes pools each plane of x into y and, unless argmax is nil, its
// argmaxes into argmax (poolPlane).
func poolPlanes[T float](g geometry, x, y []T, argmax []int32) {
	hw, p := g.h*g.w, g.positions()
	for plane := range g.n * g.c {
		var arg []int32
		if argmax != nil {
			arg = argmax[plane*p : (plane+1)*p]
		}
		poolPlane(g, x[plane*hw:(plane+1)*hw], y[plane*p:(plane+1)*p], arg)
	}
}

// argmaxes returns the op's argmaxes, made the size of its output, or
// nil where a run in dtype dt does not make them (poolPlane).
func (op *poolOp) argmaxes(dt tensor.Dtype) []int32 {
	g := op.g
	if dt == tensor.Float32 && g.twoByTwo() && !op.grads {
		return nil
	}
	if n := g.n * g.c * g.positions(); len(op.argmax) != n {
		op.argmax = make([]int32, n)
	}
	return op.argmax
}

// poolPlane pools one plane in (h·w values) of g into out and, unless
// arg is nil, its argmaxes into arg: without argmaxes, float32 2×2
// windows compare their values' bits alone.
func poolPlane[T float](g geometry, in, out []T, arg []int32) {
	one := g
	one.n, one.c = 1, 1
	in32, float32s := any(in).([]float32)
	switch {
	case float32s && g.twoByTwo() && arg == nil:
		pool2x2MaxFloat32(one, in32, any(out).([]float32))
	case float32s && g.twoByTwo():
		pool2x2Float32(one, in32, any(out).([]float32), arg)
	default:
		poolForward(one, in, out, arg)
	}
}

func poolForward[T float](g geometry, x, y []T, argmax []int32) {
	if g.twoByTwo() {
		pool2x2(g, x, y, argmax)
		return
	}
	hw, p := g.h*g.w, g.positions()
	for plane := range g.n * g.c {
		in := x[plane*hw : (plane+1)*hw]
		out, arg := y[plane*p:(plane+1)*p], argmax[plane*p:(plane+1)*p]
		for oy := range g.oh {
			y0 := oy*g.stride - g.pad
			for ox := range g.ow {
				x0 := ox*g.stride - g.pad
				best, at := T(0), int32(-1)
				for i := max(y0, 0); i < min(y0+g.k, g.h); i++ {
					row := in[i*g.w:]
					for j := max(x0, 0); j < min(x0+g.k, g.w); j++ {
						if v := row[j]; v > best {
							best, at = v, int32(i*g.w+j)
						}
					}
				}
				out[oy*g.ow+ox], arg[oy*g.ow+ox] = best, at
			}
		}
	}
}

// pool2x2 is poolForward for LeNet's 2×2 windows with stride 2, without
// the general loop's bounds: every window lies inside the input.
func pool2x2[T float](g geometry, x, y []T, argmax []int32) {
	hw, p := g.h*g.w, g.positions()
	for plane := range g.n * g.c {
		in := x[plane*hw : (plane+1)*hw]
		out, arg := y[plane*p:(plane+1)*p], argmax[plane*p:(plane+1)*p]
		for oy := range g.oh {
			top := 2 * oy * g.w
			r0, r1 := in[top:top+g.w], in[top+g.w:top+2*g.w]
			o, a := out[oy*g.ow:(oy+1)*g.ow], arg[oy*g.ow:(oy+1)*g.ow]
			for ox := range o {
				j := 2 * ox
				best, at := T(0), int32(-1)
				if v := r0[j]; v > best {
					best, at = v, int32(top+j)
				}
				if v := r0[j+1]; v > best {
					best, at = v, int32(top+j+1)
				}
				if v := r1[j]; v > best {
					best, at = v, int32(top+g.w+j)
				}
				if v := r1[j+1]; v > best {
					best, at = v, int32(top+g.w+j+1)
				}
				o[ox], a[ox] = best, at
			}
		}
	}
}

// twoByTwo reports whether the windows are LeNet's: 2×2 with stride 2
// and no padding, so that every window lies inside the input.
func (g geometry) twoByTwo() bool { return g.k == 2 && g.stride == 2 && g.pad == 0 }

// pool2x2Float32 is pool2x2 for float32 without branches on the data,
// a plane at a time (asm.MaxPool2x2Float32): the same outputs and
// argmaxes, bit for bit, NaNs included (TestPool2x2Float32), where the
// comparisons' branches, taken at random, made the loop 1.4 times as
// slow (BenchmarkPool2x2).
func pool2x2Float32(g geometry, x, y []float32, argmax []int32) {
	hw, p := g.h*g.w, g.positions()
	for plane := range g.n * g.c {
		in := x[plane*hw : (plane+1)*hw]
		out, arg := y[plane*p:(plane+1)*p], argmax[plane*p:(plane+1)*p]
		asm.MaxPool2x2Float32(in, out, arg, g.w, g.oh, g.ow)
	}
}

// pool2x2MaxFloat32 is pool2x2Float32 without the argmaxes
// (asm.MaxPool2x2ValuesFloat32): the same outputs bit for bit
// (TestPool2x2Float32).
func pool2x2MaxFloat32(g geometry, x, y []float32) {
	hw, p := g.h*g.w, g.positions()
	for plane := range g.n * g.c {
		in, out := x[plane*hw:(plane+1)*hw], y[plane*p:(plane+1)*p]
		asm.MaxPool2x2ValuesFloat32(in, out, g.w, g.oh, g.ow)
	}
}

func (op *poolOp) DiffWRT(int) []bool { return []bool{true} }

func (op *poolOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	src := op // whose argmaxes the gradient reads
	if op.twin != nil {
		src = op.twin
	}
	src.grads = true
	dx, err := gorgonia.ApplyOp(&poolGrad{base: op.derive(op.name+"∂x", 4, 4), fwd: src}, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx}, nil
}

// poolGrad sends each output's gradient to its argmax.
type poolGrad struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *poolOp
	out buffer
	// folded is set when the convolution whose output the pool reads
	// makes this gradient itself, in its own layout (convGradMatrix):
	// nothing else reads this op's value, which is then not computed.
	folded bool
}

func (op *poolGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	g := op.fwd.g
	return tensor.Shape{g.n, g.c, g.h, g.w}, nil
}

func (op *poolGrad) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, poolGradCPU[float32], poolGradCPU[float64])
}

// poolGradCPU is poolGrad's run on the CPU in T.
func poolGradCPU[T float](op *poolGrad, grad *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	g := op.fwd.g
	out := op.out.get(grad.Dtype(), false, g.n, g.c, g.h, g.w) // poolBackward clears it
	if op.folded {
		return out, nil
	}
	poolBackward(g, op.fwd.argmax, data[T](grad), data[T](out))
	return out, nil
}

// poolBackward sets dx to the gradient: zero, plus each output's gradient
// at its argmax. A plane is cleared just before its outputs are added, while
// it is in the cache, rather than the whole of dx in a pass of its own.
func poolBackward[T float](g geometry, argmax []int32, dy, dx []T) {
	// Each plane is its own: a helper may take half of them.
	shareRange(g.n*g.c, len(dx), func(lo, hi int) { poolBackwardPlanes(g, argmax, dy, dx, lo, hi) })
}

// poolBackwardPlanes is poolBackward for planes lo ≤ plane < hi.
func poolBackwardPlanes[T float](g geometry, argmax []int32, dy, dx []T, lo, hi int) {
	hw, p := g.h*g.w, g.positions()
	for plane := lo; plane < hi; plane++ {
		poolGradPlane(g, argmax[plane*p:(plane+1)*p], dy[plane*p:(plane+1)*p], dx[plane*hw:(plane+1)*hw])
	}
}

// poolGradPlane sets one plane's gradient dx (h·w values) to zero plus
// each output's gradient dy at its argmax.
func poolGradPlane[T float](g geometry, argmax []int32, dy, dx []T) {
	if dy32, ok := any(dy).([]float32); ok && g.twoByTwo() && g.h == 2*g.oh && g.w == 2*g.ow {
		asm.MaxPool2x2GradFloat32(dy32, argmax, any(dx).([]float32), g.w, g.oh, g.ow)
		return
	}
	clear(dx)
	for i, at := range argmax {
		if at >= 0 {
			dx[at] += dy[i]
		}
	}
}
