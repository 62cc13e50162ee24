package ops

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// Conv2d adds a 2-D convolution of x (batch, C, H, W) with the filters w
// (O, C, k, k), stride and zero padding pad on every side, plus the bias
// b (O values in any shape, e.g. (1, O, 1, 1)) if b is not nil, to x's
// graph. The result is (batch, O, OH, OW) with OH = (H + 2·pad − k)/stride
// + 1, as PyTorch's nn.Conv2d with square kernels.
//
// It is one matrix product of the filters with the im2col matrix of the
// whole batch (its columns are the examples' output positions), so a
// layer deep in a network with few positions per example still makes a
// product large enough to be efficient. Once differentiated the op keeps
// that matrix for the filters' gradient.
//
// Where the result is read by ReLUMaxPool2d alone, the convolution runs
// the pool itself and the result's value is never written: read the
// pool's.
func Conv2d(x, w, b *gorgonia.Node, stride, pad int) (*gorgonia.Node, error) {
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 4 || len(ws) != 4 || ws[2] != ws[3] {
		return nil, fmt.Errorf("conv2d: input %v and filters %v, want (batch, C, H, W) and (O, C, k, k)", xs, ws)
	}
	if xs[1] != ws[1] {
		return nil, fmt.Errorf("conv2d: input of %d channels, filters of %d", xs[1], ws[1])
	}
	if stride < 1 || pad < 0 {
		return nil, fmt.Errorf("conv2d: stride %d, padding %d", stride, pad)
	}
	g := geometry{n: xs[0], c: xs[1], h: xs[2], w: xs[3], o: ws[0], k: ws[2], stride: stride, pad: pad}
	g.oh = (g.h+2*pad-g.k)/stride + 1
	g.ow = (g.w+2*pad-g.k)/stride + 1
	if g.h+2*pad < g.k || g.w+2*pad < g.k {
		return nil, fmt.Errorf("conv2d: %d×%d kernel on a %d×%d input with padding %d", g.k, g.k, g.h, g.w, pad)
	}
	inputs := []*gorgonia.Node{x, w}
	dims := []int{4, 4}
	if b != nil {
		if b.Shape().TotalSize() != g.o {
			return nil, fmt.Errorf("conv2d: bias of shape %v for %d filters", b.Shape(), g.o)
		}
		inputs = append(inputs, b)
		dims = append(dims, b.Dims())
	}
	op := &convOp{base: newBase(fmt.Sprintf("Conv2d(k=%d,s=%d,p=%d)", g.k, stride, pad), append(dims, 4)...), g: g, bias: b != nil}
	// The input needs no gradient when it is a leaf (the images): skip
	// the most expensive backward product there.
	op.inputGrad = !x.IsVar()
	return apply(op, inputs...)
}

// convOp is the forward convolution.
type convOp struct {
	base
	gpu       onGPU // on a device: see deviceDo
	g         geometry
	bias      bool
	inputGrad bool    // whether the input's gradient is wanted
	keepCols  bool    // set when differentiated: keep the batch's im2col matrix
	twin      *convOp // the recorded op this one replays (see Record)
	// pool, when set, is the pool that alone reads the output: the op
	// runs it in its stead (unfoldInto), and leaves its own output unset.
	// Whether the pool is its output's only reader is checked at the
	// first run (foldChecked), once the graph is whole: outNode's readers.
	pool              *poolOp
	outNode, poolNode *gorgonia.Node
	foldChecked       bool
	out               buffer
	state             any // *convState[T]
	// Filter gradients stacked over runs (StackFilterGrads): how many
	// runs are armed, how many kept their output gradient, and how many
	// the last flush computed.
	stackRuns, stackFilled, stackDone int
	// Particles' passes over one batch stacked (StackAcross): how many
	// particles, each one's backward passes, and the next particle's
	// forward run.
	across struct{ runs, passes, next int }
	// shareRuns is how many stacked runs in a row are one particle's
	// passes, which share its forward run (pooledFilterGrad).
	shareRuns int
	// hwcInput is set when the gradients read the pool's gradient with
	// the input laid out rows × columns × channels (pooledgrad.go): the
	// run keeps its input that way.
	hwcInput bool
}

// convState is what a convolution keeps between runs, in its dtype.
type convState[T float] struct {
	cols  scratch[T] // rows() × n·positions(): the batch's patches
	input scratch[T] // a leaf input's values when cols were made from it
	prod  scratch[T] // o × chunk·positions(): filters · patches
	// With the output pooled in the op's stead (pool set): two examples'
	// output planes, one for each half of a helped loop, and the pool's
	// output and argmaxes for the run (poolTarget).
	planes scratch[T]
	pooled []T
	argmax []int32
	dcols  scratch[T] // rows() × chunk·positions(): patches' gradient
	// With stacked filter gradients: the runs' output gradients (runs·o ×
	// n·positions()) and their filter gradients (runs·o × rows()).
	stack, stackDW scratch[T]
	// The second half of a filter gradient's sum (sumOverPositions).
	dwPart  scratch[T]
	slots   views[T] // tensors over the stack's runs
	dwSlots views[T] // and over their filter gradients
	// With particles stacked (StackAcross): their filters (runs·o ×
	// rows()) and the forward product of them all (runs·o ×
	// n·positions()).
	acrossW, acrossProd scratch[T]
	// tapped is set while the products read their taps from the input
	// (directconv.go) rather than from cols: input then holds the batch, for
	// the filter gradient, and offs the taps' offsets.
	tapped bool
	offs   []int
	// pooledRows is set while the gradient matrix holds a pool's
	// gradient in place of the output's, pooledPer values per example
	// (pooledgrad.go).
	pooledRows bool
	pooledPer  int
	inputHWC   bool // input holds the batch rows × columns × channels
	// The transposes of an image to and from that layout (hwcIndices).
	toHWC, toCHW []int32
	// The input gradient read back into shifted planes (tapInputGrad):
	// the filters' values by tap, the taps in its order and their
	// offsets in an image's planes.
	backW     scratch[T]
	backOrder []int
	backOffs  []int
	// wino is set while the run uses Winograd's products (winograd.go):
	// cols then holds the input's transforms V, winoU the filters' U,
	// and winoZ the output gradient's Z of the backward pass.
	// winoIdx and winoFold are the geometry's tables for the gradient's
	// transforms (gradTileIndex, foldTable).
	wino         bool
	winoU, winoZ scratch[T]
	// winoUStale is set when an exchange (savedpass.go) may have given the
	// op another run's V: U is then remade from the filters before the
	// input gradient reads it.
	winoUStale bool
	winoIdx    []int32
	winoFold   []int32
	// winoFoldSpacing is the spacing of the transforms winoFold is for.
	winoFoldSpacing int
	// A pass run by blocks (winoBlocked) makes the filter gradient's
	// summed products with the input gradient, into winoSums
	// (winoSummed set), unless the filter gradient ran first
	// (winoFilterDone set); both are cleared as the pass begins.
	winoSums                   scratch[T]
	winoSummed, winoFilterDone bool
}

func (op *convOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.g.n, op.g.o, op.g.oh, op.g.ow}, nil
}

func (op *convOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, convCPU[float32], convCPU[float64])
}

func (op *convOp) replayed() (gorgonia.Value, bool) {
	if op.twin == nil {
		return nil, false
	}
	return op.twin.out.t, true
}

// convCPU is convOp's run on the CPU in T.
func convCPU[T float](op *convOp, x *tensor.Dense, vals []gorgonia.Value) (gorgonia.Value, error) {
	if op.pool != nil && !op.foldChecked {
		op.foldChecked = true
		if !onlyReader(op.outNode, op.poolNode) {
			op.pool.folded, op.pool = false, nil
		}
	}
	out := op.out.get(x.Dtype(), false, op.g.n, op.g.o, op.g.oh, op.g.ow)
	var bias gorgonia.Value
	if op.bias {
		bias = vals[2]
	}
	st := state[convState[T]](&op.state)
	if op.across.runs > 0 {
		return out, acrossForward(op, st, data[T](x), vals[1].Data().([]T), biasData[T](bias), data[T](out))
	}
	convForward(op, st, data[T](x), vals[1].Data().([]T), biasData[T](bias), data[T](out))
	return out, nil
}

func biasData[T float](v gorgonia.Value) []T {
	if v == nil {
		return nil
	}
	return v.Data().([]T)
}

// convForward computes out = w ⊛ x + bias, a chunk of examples at a time;
// the patches kept for the gradient are the whole batch's, made by chunks
// into one matrix, or for a leaf (the images) made at once and reused.
func convForward[T float](op *convOp, st *convState[T], x, w, bias, out []T) {
	poolTarget(op, st)
	g := op.g
	st.wino = false
	if st32, ok := any(st).(*convState[float32]); ok && op.winogradFits() {
		st32.wino = true
		winoForward(g, st32, any(x).([]float32), any(w).([]float32), any(bias).([]float32), any(out).([]float32))
		return
	}
	p, rows := g.positions(), g.rows()
	chunk := g.chunk()
	if tapsInput(op, st, x) {
		tapChunks(op, st, x, w, bias, out)
		return
	}
	// A leaf's patches (the images') may still be there from the last run.
	wholeBatch := op.keepCols && (!op.inputGrad || !chunkKeptPatches)
	if wholeBatch {
		chunk = g.n
	}
	for n0 := 0; n0 < g.n; n0 += chunk {
		n1 := min(g.n, n0+chunk)
		cols := (n1 - n0) * p
		var patches []T
		ld := cols
		switch {
		case wholeBatch:
			patches = batchPatches(op, st, x)
		case op.keepCols:
			// The whole batch's patches, kept for the gradient, made a
			// chunk at a time: the product reads each chunk's columns
			// while they are still in the cache.
			ld = g.n * p
			patches = st.cols.get(rows * ld)[n0*p:]
			im2colHelped(g, x, n0, n1, patches, ld)
		default:
			patches = st.cols.get(rows * cols)
			im2colHelped(g, x, n0, n1, patches, cols)
		}
		prod := st.prod.get(g.o * cols)
		gemm(blas.NoTrans, blas.NoTrans, g.o, cols, rows, w, rows, patches, ld, 0, prod, cols)
		unfoldInto(op, st, prod, n0, n1, bias, out)
	}
}

// tapChunks is convForward's product read from the input x (tapsInput),
// a chunk of tapChunk examples at a time, each chunk unfolded (or
// pooled) while its product is in the cache.
func tapChunks[T float](op *convOp, st *convState[T], x, w, bias, out []T) {
	g := op.g
	p, chunk := g.positions(), g.tapChunk()
	for n0 := 0; n0 < g.n; n0 += chunk {
		n1 := min(g.n, n0+chunk)
		prod := st.prod.get(g.o * (n1 - n0) * p)
		tapProduct(g, st, x, w, g.o, prod, (n1-n0)*p, n0, n1)
		unfoldInto(op, st, prod, n0, n1, bias, out)
	}
}

// tapChunk is how many examples tapChunks takes at a time: about
// tapChunkPositions positions, and at least two, so that a helper may
// take one.
func (g geometry) tapChunk() int {
	return min(g.n, max(2, tapChunkPositions/g.positions()))
}

// tapChunkPositions: a chunk's product, LeNet's 10 or 20 filters, is
// then 320 or 650 KB, in the core's second-level cache (1 or 2 MB).
// Chunks of 2,048 positions ran no faster and allocated a helped loop's
// closures four times as often (StepBatch).
const tapChunkPositions = 8192

// batchPatches returns the patches of the whole batch x, kept for the
// gradient: made anew, or, for a leaf input (the images, the same for
// every particle a worker runs on a batch), still there from the last
// run on the same values.
func batchPatches[T float](op *convOp, st *convState[T], x []T) []T {
	g := op.g
	patches := st.cols.get(g.rows() * g.n * g.positions())
	if op.inputGrad || st.tapped || !slices.Equal(st.input, x) {
		st.tapped = false
		im2col(g, x, 0, g.n, patches, g.n*g.positions())
		if !op.inputGrad {
			st.input = append(st.input[:0], x...)
		}
	}
	return patches
}

// unfold writes the product prod of examples n0 ≤ n < n1, (o, examples ×
// positions), plus the bias, into out, (examples, o, positions).
func unfold[T float](g geometry, prod []T, n0, n1 int, bias, out []T) {
	p := g.positions()
	cols := (n1 - n0) * p
	for n := n0; n < n1; n++ {
		for o := range g.o {
			at := (n*g.o + o) * p
			unfoldPlane(out[at:at+p], prod[o*cols+(n-n0)*p:][:p], bias, o)
		}
	}
}

// unfoldPlane sets dst to src plus channel o's bias (if any).
func unfoldPlane[T float](dst, src, bias []T, o int) {
	switch dst32, float32s := any(dst).([]float32); {
	case bias == nil:
		copy(dst, src)
	case float32s:
		asm.AddConstFloat32(dst32, any(src).([]float32), float32(bias[o]))
	default:
		asm.AddConst(dst, src, bias[o])
	}
}

// unfoldInto is unfold of the product prod of examples n0 ≤ n < n1 into
// op's output out or, where the output feeds a pool alone (op.pool), the
// pool's run on the output's planes as unfold would make them: an
// example's planes are made in scratch, still in the cache when the pool
// reads them, and the output itself is never written.
func unfoldInto[T float](op *convOp, st *convState[T], prod []T, n0, n1 int, bias, out []T) {
	pool := op.pool
	if pool == nil {
		unfold(op.g, prod, n0, n1, bias, out)
		return
	}
	g, pg := op.g, pool.g
	p, pp := g.positions(), pg.positions()
	cols := (n1 - n0) * p
	pooled, argmax := st.pooled, st.argmax
	planes := st.planes.get(2 * g.o * p) // one example's, for each half
	// Each example's planes are its own: a helper may take half of them.
	shareRange(n1-n0, g.o*cols, func(a, b int) {
		mine := planes[:g.o*p]
		if a > 0 {
			mine = planes[g.o*p:]
		}
		for n := n0 + a; n < n0+b; n++ {
			for o := range g.o {
				unfoldPlane(mine[o*p:(o+1)*p], prod[o*cols+(n-n0)*p:][:p], bias, o)
			}
			for o := range g.o {
				at := (n*g.o + o) * pp
				var arg []int32
				if argmax != nil {
					arg = argmax[at : at+pp]
				}
				poolPlane(pg, mine[o*p:(o+1)*p], pooled[at:at+pp], arg)
			}
		}
	})
}

// poolTarget sets st up for a run whose output op's pool takes
// (unfoldInto): the pool's output and argmaxes, which the pool's
// exchanges (savedpass.go) may have swapped since the last run.
func poolTarget[T float](op *convOp, st *convState[T]) {
	if pool := op.pool; pool != nil {
		dt, pg := dtypeOf[T](), pool.g
		st.pooled = data[T](pool.out.get(dt, false, pg.n, pg.c, pg.oh, pg.ow))
		st.argmax = pool.argmaxes(dt)
	}
}

// onlyReader reports whether the node reader is the only node of the
// graph that reads x.
func onlyReader(x, reader *gorgonia.Node) bool {
	readers := x.Graph().To(x.ID())
	return readers.Len() == 1 && readers.Next() && readers.Node().(*gorgonia.Node) == reader
}

// dtypeOf is T's tensor dtype.
func dtypeOf[T float]() tensor.Dtype {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return tensor.Float32
	}
	return tensor.Float64
}

func (op *convOp) DiffWRT(int) []bool {
	d := []bool{op.inputGrad, true}
	if op.bias {
		d = append(d, true)
	}
	return d
}
