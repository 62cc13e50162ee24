package ops

import (
	"fmt"
	"slices"
	"sync"

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

// geometry is a convolution's sizes.
type geometry struct {
	n, c, h, w  int // input
	o, k        int // filters
	stride, pad int
	oh, ow      int // output
}

func (g geometry) positions() int { return g.oh * g.ow } // per example
func (g geometry) rows() int      { return g.c * g.k * g.k }

// chunk is how many examples a product without the whole batch's im2col
// matrix takes at a time: enough positions for an efficient product.
func (g geometry) chunk() int {
	return min(g.n, max(1, 1024/g.positions()))
}

// im2col writes the patches of examples n0 ≤ n < n1 of x as columns of
// cols (rows() × ld): row (c, i, j), column (n−n0)·positions() + output
// position; taps in the padding are zero. Like col2im it walks the
// geometry's taps and writes cols row by row.
func im2col[T float](g geometry, x []T, n0, n1 int, cols []T, ld int) {
	im2colTaps(g, tapsOf(g), x, n0, n1, cols, ld)
}

// im2colTaps is im2col with the given taps of g.
func im2colTaps[T float](g geometry, taps *taps, x []T, n0, n1 int, cols []T, ld int) {
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	for c := range g.c {
		for t := range kk {
			row := cols[(c*kk+t)*ld:]
			full := taps.covered[t] // every output position's tap is inside
			for n := n0; n < n1; n++ {
				dst := row[(n-n0)*p:][:p]
				plane := x[(n*g.c+c)*hw:][:hw]
				if !full {
					clear(dst)
				}
				if taps.runs != nil {
					runs := taps.runs[taps.start[t]:taps.start[t+1]]
					if dst32, ok := any(dst).([]float32); ok {
						asm.CopyRunsFloat32(dst32, any(plane).([]float32), runs)
						continue
					}
					for _, r := range runs {
						copy(dst[r.Pos:r.Pos+r.N], plane[r.At:r.At+r.N])
					}
					continue
				}
				pos := taps.pos[taps.start[t]:taps.start[t+1]]
				at := taps.at[taps.start[t]:taps.start[t+1]]
				at = at[:len(pos)]
				for e, q := range pos {
					dst[q] = plane[at[e]]
				}
			}
		}
	}
}

// inside is the range [lo, hi) of output positions along an axis whose
// tap at kernel offset j falls inside the input (of size in; out
// positions).
func (g geometry) inside(j, in, out int) (lo, hi int) {
	// ox·stride − pad + j ≥ 0 and ≤ in − 1.
	if d := g.pad - j; d > 0 {
		lo = (d + g.stride - 1) / g.stride
	}
	if last := in - 1 + g.pad - j; last >= 0 {
		hi = min(out, last/g.stride+1)
	}
	return lo, max(lo, hi)
}

// col2im adds the columns of cols (laid out as im2col writes them) back
// into the input positions they came from, for examples n0 ≤ n < n1.
//
// It walks the geometry's taps (see tapsOf) rather than the rows of
// each plane, and reads cols row by row, in order: ResNet-18's deep
// layers have planes of 2×2 to 8×8 positions, where loops over rows
// spend more on their bounds than on the additions.
func col2im[T float](g geometry, cols []T, ld, n0, n1 int, dx []T) {
	col2imTaps(g, tapsOf(g), cols, ld, n0, n1, dx)
}

// col2imTaps is col2im with the given taps of g.
func col2imTaps[T float](g geometry, taps *taps, cols []T, ld, n0, n1 int, dx []T) {
	if taps.runs != nil {
		col2imRuns(g, taps, cols, ld, n0, n1, dx, false)
		return
	}
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	for c := range g.c {
		for t := range kk {
			row := cols[(c*kk+t)*ld:]
			pos := taps.pos[taps.start[t]:taps.start[t+1]]
			at := taps.at[taps.start[t]:taps.start[t+1]]
			at = at[:len(pos)]
			for n := n0; n < n1; n++ {
				src := row[(n-n0)*p:][:p]
				plane := dx[(n*g.c+c)*hw:][:hw]
				for e, q := range pos {
					plane[at[e]] += src[q]
				}
			}
		}
	}
}

// col2imRuns is col2im for taps listed as runs. In float32 an assembly
// loop adds the runs (asm.AddRunsFloat32: 1.3 ns per addition in Go, the
// largest cost of LeNet's step after the products); with clearCols
// (float32 only) it also sets each entry of cols it reads to +0.
func col2imRuns[T float](g geometry, taps *taps, cols []T, ld, n0, n1 int, dx []T, clearCols bool) {
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	cols32, _ := any(cols).([]float32)
	dx32, _ := any(dx).([]float32)
	add := asm.AddRunsFloat32
	if clearCols {
		add = asm.AddRunsClearingFloat32
	}
	for c := range g.c {
		for t := range kk {
			row := cols[(c*kk+t)*ld:]
			runs := taps.runs[taps.start[t]:taps.start[t+1]]
			for n := n0; n < n1; n++ {
				at, to := (c*kk+t)*ld+(n-n0)*p, (n*g.c+c)*hw
				if cols32 != nil {
					add(dx32[to:][:hw], cols32[at:][:p], runs)
					continue
				}
				asm.AddRuns(dx[to:][:hw], row[(n-n0)*p:][:p], runs)
			}
		}
	}
}

// col2imPlanes is col2imRuns with clearing for images n0+a ≤ n < n0+b of
// a chunk from n0, a plane at a time (asm.Col2imPlaneFloat32).
func col2imPlanes(g geometry, cols []float32, ld, n0, a, b int, dx []float32) {
	p, hw, kk := g.positions(), g.h*g.w, g.k*g.k
	for n := a; n < b; n++ {
		for c := range g.c {
			asm.Col2imPlaneFloat32(&cols[c*kk*ld+n*p], ld, &dx[((n0+n)*g.c+c)*hw], g.h, g.w, g.k, g.oh, g.ow)
		}
	}
}

// taps lists, for each kernel offset t = i·k + j of a geometry, the
// output positions whose tap at that offset falls inside the input and
// the input positions they fall on (within a plane). With stride 1 and
// rows of at least minRun positions it lists them as runs (the valid
// part of an output row falls on consecutive inputs), otherwise one by
// one: a loop per run costs more than an index per position when runs
// are short.
type taps struct {
	start   []int32 // offset t's entries: start[t] ≤ e < start[t+1]
	covered []bool  // per offset: whether its taps of every output position are inside
	runs    []asm.Run
	pos     []int32 // output position oy·ow + ox, without runs
	at      []int32 // input position y·w + x, without runs
}

// minRun is the shortest output row col2im and im2col walk as runs
// (BenchmarkCol2im, BenchmarkIm2col: with the float32 runs in assembly,
// rows of 8 go 1.2-1.8 times as fast as runs as position by position
// and rows of 4 no slower; rows of 2 were slower with the Go loops).
const minRun = 4

// tapCache holds the taps of each geometry met, keyed by the geometry
// without its batch size.
var tapCache sync.Map // geometry → *taps

func tapsOf(g geometry) *taps {
	g.n = 0
	if t, ok := tapCache.Load(g); ok {
		return t.(*taps)
	}
	actual, _ := tapCache.LoadOrStore(g, makeTaps(g, g.stride == 1 && g.ow >= minRun))
	return actual.(*taps)
}

// makeTaps lists g's taps, as runs (stride 1 only) or one by one.
func makeTaps(g geometry, asRuns bool) *taps {
	t := &taps{start: make([]int32, 1, g.k*g.k+1)}
	for i := range g.k {
		ylo, yhi := g.inside(i, g.h, g.oh)
		for j := range g.k {
			xlo, xhi := g.inside(j, g.w, g.ow)
			for oy := ylo; oy < yhi && xlo < xhi; oy++ {
				at := (oy*g.stride-g.pad+i)*g.w + xlo*g.stride - g.pad + j
				if asRuns {
					t.runs = append(t.runs, asm.Run{Pos: int32(oy*g.ow + xlo), At: int32(at), N: int32(xhi - xlo)})
					continue
				}
				for ox := xlo; ox < xhi; ox++ {
					t.pos = append(t.pos, int32(oy*g.ow+ox))
					t.at = append(t.at, int32(at))
					at += g.stride
				}
			}
			t.start = append(t.start, int32(len(t.runs)+len(t.pos)))
			t.covered = append(t.covered, (yhi-ylo)*(xhi-xlo) == g.positions())
		}
	}
	return t
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
	// (taps.go) rather than from cols: input then holds the batch, for
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
	// winoUStale is set when an exchange (held.go) may have given the
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
	x, err := dense(vals[0], op.name)
	if err != nil {
		return nil, err
	}
	if op.twin != nil {
		return op.twin.out.t, nil // replaying: the recorded op's run computed it
	}
	if op.dev != nil {
		return op.deviceDo(vals)
	}
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
	if op.across.runs > 0 {
		switch x.Dtype() {
		case tensor.Float32:
			err = acrossForward(op, state[convState[float32]](&op.state), data[float32](x), vals[1].Data().([]float32), biasData[float32](bias), data[float32](out))
		default:
			err = acrossForward(op, state[convState[float64]](&op.state), data[float64](x), vals[1].Data().([]float64), biasData[float64](bias), data[float64](out))
		}
		return out, err
	}
	switch x.Dtype() {
	case tensor.Float32:
		convForward(op, state[convState[float32]](&op.state), data[float32](x), vals[1].Data().([]float32), biasData[float32](bias), data[float32](out))
	default:
		convForward(op, state[convState[float64]](&op.state), data[float64](x), vals[1].Data().([]float64), biasData[float64](bias), data[float64](out))
	}
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

// im2colHelped is im2col with half of the images on a helper where one
// waits: each image's columns are its own.
func im2colHelped[T float](g geometry, x []T, n0, n1 int, cols []T, ld int) {
	p := g.positions()
	helpRange(n1-n0, g.rows()*(n1-n0)*p, func(a, b int) {
		im2col(g, x, n0+a, n0+b, cols[a*p:], ld)
	})
}

// chunkKeptPatches is whether a differentiated convolution whose input
// is not a leaf makes its kept patches a chunk at a time, each chunk's
// product right after it (convForward), rather than the whole batch's
// patches and then one product. The products' entries are the same sums,
// but OpenBLAS orders them by the product's shape, so the last bits
// differ (TestChunkedPatchesChangeLittle); tests turn it off to compare.
var chunkKeptPatches = true

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
	helpRange(n1-n0, g.o*cols, func(a, b int) {
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
// exchanges (held.go) may have swapped since the last run.
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

// SymDiff returns the gradients with respect to the input (nil when not
// wanted), the filters and the bias (if any), all from the output's
// gradient laid out once as the forward product's (O, batch·positions)
// matrix.
func (op *convOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	src := op // whose patches the gradient reads
	if op.twin != nil {
		if src = op.twin; !src.keepCols {
			return nil, fmt.Errorf("%s: replaying an op that was never differentiated", op.name)
		}
	}
	src.keepCols = true
	mat := &convGradMatrix{base: op.derive(op.name+"∂out", 4, 2), g: op.g, fwd: src}
	in := grad
	if pg, ok := grad.Op().(*poolGrad); ok && foldPoolGrads && op.dev == nil && pg.dev == nil {
		// The output's gradient is a pool's (LeNet's layers): made here
		// from the pool's output gradient, straight into the matrix's
		// layout, rather than in the input's layout and then reordered.
		mat.pool, pg.folded = pg, true
		in = firstInput(grad)
	}
	gm, err := gorgonia.ApplyOp(mat, in)
	if err != nil {
		return nil, err
	}
	grads := make(gorgonia.Nodes, len(inputs))
	if op.inputGrad {
		if grads[0], err = gorgonia.ApplyOp(&convGradInput{base: op.derive(op.name+"∂x", 4, 2, 4), fwd: src}, inputs[1], gm); err != nil {
			return nil, err
		}
	}
	if grads[1], err = gorgonia.ApplyOp(&convGradFilters{base: op.derive(op.name+"∂w", 2, 4), fwd: src}, gm); err != nil {
		return nil, err
	}
	if op.bias {
		shape := inputs[2].Shape().Clone()
		// The bias's gradient is the output gradient's channel sums,
		// which the reordering makes as it passes over it (positions a
		// multiple of 4, see toChannelMajor).
		bg := &biasGrad{base: op.derive(op.name+"∂b", 2, len(shape)), shape: shape}
		if op.g.positions()%4 == 0 {
			m := gm.Op().(*convGradMatrix)
			m.rowSums, m.part = make([]float64, op.g.o), make([][4]float64, op.g.o)
			bg.summed = m
		}
		if grads[2], err = gorgonia.ApplyOp(bg, gm); err != nil {
			return nil, err
		}
	}
	// Once it is known who reads the sums.
	var hwc bool
	if mat.pooledRows, hwc = mat.pooledRowsFit(); mat.pooledRows && hwc {
		src.hwcInput = true
	}
	return grads, nil
}

// convGradMatrix lays the output's gradient (batch, O, OH, OW) out as the
// forward product's matrix (O, batch·OH·OW). Where the output feeds a
// pool alone, it reads the pool's output gradient instead and makes the
// output's gradient itself, plane by plane into the matrix (pool is set:
// poolToChannelMajor): the same values, without writing them in the
// output's layout and reading them back.
type convGradMatrix struct {
	base
	gpu  onGPU // on a device: see deviceDo
	g    geometry
	fwd  *convOp   // whose stack, when armed, it writes into (StackFilterGrads)
	pool *poolGrad // when set, the pool gradient it makes in its stead
	// pooledRows is set when, in float32 with the products reading their
	// input, it writes the pool's gradient instead (pooledgrad.go).
	pooledRows bool
	out        buffer
	// rowSums, when set (a bias's gradient reads them), receives each
	// channel's sum of the gradient as the reordering passes over it,
	// with part for their partial sums (see toChannelMajor).
	rowSums []float64
	part    [][4]float64
}

func (op *convGradMatrix) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.g.o, op.g.n * op.g.positions()}, nil
}

func (op *convGradMatrix) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if op.dev != nil {
		return op.deviceDo(vals)
	}
	grad, err := dense(vals[0], op.name)
	if err != nil {
		return nil, err
	}
	out := op.fwd.nextSlot(grad.Dtype()) // the stack's next run, if armed
	if out == nil {
		out = op.out.get(grad.Dtype(), false, op.g.o, op.g.n*op.g.positions())
	}
	switch {
	case op.pool != nil && grad.Dtype() == tensor.Float32:
		st := state[convState[float32]](&op.fwd.state)
		st.pooledRows = op.pooledRows && pooledGrads && asm.UseAVX512 && st.tapped && (op.g.c == 1 && !op.fwd.inputGrad || st.inputHWC)
		if st.pooledRows {
			st.pooledPer = op.pool.fwd.g.positions()
			poolToPooledRows(op.g, op.pool.fwd, data[float32](grad), data[float32](out), op.part, op.rowSums, st.inputHWC)
			break
		}
		poolToChannelMajor(op.g, op.pool.fwd, data[float32](grad), data[float32](out), op.part, op.rowSums)
	case op.pool != nil:
		poolToChannelMajor(op.g, op.pool.fwd, data[float64](grad), data[float64](out), op.part, op.rowSums)
	case grad.Dtype() == tensor.Float32:
		toChannelMajor(op.g, data[float32](grad), data[float32](out), op.part, op.rowSums)
	default:
		toChannelMajor(op.g, data[float64](grad), data[float64](out), op.part, op.rowSums)
	}
	if st, ok := op.fwd.state.(*convState[float32]); ok && st.wino {
		st.winoSummed, st.winoFilterDone = false, false
		if !winoBlocked(op.g) { // else made a block at a time, with the gradients
			winoGradTransform(op.g, st, data[float32](out))
		}
	}
	return out, nil
}

// firstInput is the first input of n, an op's node.
func firstInput(n *gorgonia.Node) *gorgonia.Node {
	inputs := n.Graph().From(n.ID())
	inputs.Next()
	return inputs.Node().(*gorgonia.Node)
}

// foldPoolGrads lets a convolution make the gradient of the pool that
// reads its output (convGradMatrix); tests turn it off to compare.
var foldPoolGrads = true

// poolToChannelMajor is toChannelMajor of the gradient pool sends to its
// input (poolGradPlane) from its output's gradient dy: each plane made
// where dst wants it, then summed where it lies, in toChannelMajor's
// order, so that dst and sums get the same bits. An example's planes are
// all made before they are summed: the pool's masked stores cannot
// forward their values to loads right after them.
func poolToChannelMajor[T float](g geometry, pool *poolOp, dy, dst []T, part [][4]float64, sums []float64) {
	p, pp := g.positions(), pool.g.positions()
	clear(part)
	d32, float32s := any(dst).([]float32)
	// Each channel's planes and sums are its own: a helper may take half
	// of the channels.
	helpRange(g.o, len(dst), func(o0, o1 int) {
		for n := range g.n {
			for o := o0; o < o1; o++ {
				at := (n*g.o + o) * pp
				poolGradPlane(pool.g, pool.argmax[at:at+pp], dy[at:at+pp], dst[o*g.n*p+n*p:][:p])
			}
			o := o0
			if part != nil && float32s && p%4 == 0 && asm.UseAVX2 {
				// Four channels' sums side by side.
				for ; o+4 <= o1; o += 4 {
					asm.Sum4PlanesFloat32(d32[o*g.n*p+n*p:], g.n*p, p, (*[4][4]float64)(part[o:o+4]))
				}
			}
			for ; o < o1; o++ {
				plane := dst[o*g.n*p+n*p:][:p]
				switch {
				case part == nil:
				case float32s && p%4 == 0:
					in := d32[o*g.n*p+n*p:][:p]
					asm.CopySum4Float32(in, in, &part[o])
				default:
					asm.AddTo4(&part[o], plane)
				}
			}
		}
	})
	sumParts(part, sums)
}

// toChannelMajor reorders src (examples, o, positions) into dst (o,
// examples × positions). With part (o partial sums), it also sets
// sums[o] to channel o's sum, the very sum biasGrad makes of dst's row o
// (asm.AddTo4's four partial sums), which needs positions a multiple of 4:
// then adding an example's positions in turn gives each value the
// partial sum it gets in the whole row.
func toChannelMajor[T float](g geometry, src, dst []T, part [][4]float64, sums []float64) {
	p := g.positions()
	clear(part)
	if s32, ok := any(src).([]float32); ok && part != nil && p%4 == 0 {
		// The copy and the sums in one pass (asm.CopySum4Float32).
		d32 := any(dst).([]float32)
		// Each channel's rows and sums are its own: a helper may take
		// half of the channels.
		helpRange(g.o, len(s32), func(o0, o1 int) {
			for n := range g.n {
				for o := o0; o < o1; o++ {
					asm.CopySum4Float32(d32[o*g.n*p+n*p:][:p], s32[(n*g.o+o)*p:][:p], &part[o])
				}
			}
		})
		sumParts(part, sums)
		return
	}
	for n := range g.n {
		for o := range g.o {
			piece := src[(n*g.o+o)*p:][:p]
			copy(dst[o*g.n*p+n*p:o*g.n*p+(n+1)*p], piece)
			if part != nil {
				asm.AddTo4(&part[o], piece)
			}
		}
	}
	sumParts(part, sums)
}

// sumParts sets sums[o] to the sum of channel o's four partial sums, in
// asm.AddTo4's order.
func sumParts(part [][4]float64, sums []float64) {
	for o := range part {
		sums[o] = (part[o][0] + part[o][1]) + (part[o][2] + part[o][3])
	}
}

// convGradFilters is ∂L/∂w = G·colsᵀ, from the patches the forward run
// kept.
type convGradFilters struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *convOp
	out buffer
}

func (op *convGradFilters) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	g := op.fwd.g
	return tensor.Shape{g.o, g.c, g.k, g.k}, nil
}

func (op *convGradFilters) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if op.dev != nil {
		return op.deviceDo(vals)
	}
	gm, err := dense(vals[0], op.name)
	if err != nil {
		return nil, err
	}
	g := op.fwd.g
	if op.fwd.stackRuns > 0 {
		// Stacked: FlushFilterGrads computes it with the other runs'.
		if err := op.fwd.keep(gm); err != nil {
			return nil, err
		}
		return op.out.get(gm.Dtype(), true, g.o, g.c, g.k, g.k), nil
	}
	out := op.out.get(gm.Dtype(), false, g.o, g.c, g.k, g.k)
	np := g.n * g.positions()
	switch gm.Dtype() {
	case tensor.Float32:
		st := state[convState[float32]](&op.fwd.state)
		if st.wino {
			winoFilterGrad(g, st, data[float32](gm), data[float32](out))
			break
		}
		if st.pooledRows {
			if st.inputHWC {
				pooledFilterGradHWC(g, st.pooledPer, data[float32](gm), np, g.o, st.input, data[float32](out), g.rows())
				break
			}
			pooledFilterGrad(g, st.pooledPer, data[float32](gm), np, g.o, 1, st.input, data[float32](out), g.rows())
			break
		}
		if st.tapped {
			tapGradient(g, st, data[float32](gm), g.o, data[float32](out))
			break
		}
		sumOverPositions(g.o, g.rows(), np, data[float32](gm), np, st.cols, np, data[float32](out), g.rows(), &st.dwPart)
	default:
		st := state[convState[float64]](&op.fwd.state)
		sumOverPositions(g.o, g.rows(), np, data[float64](gm), np, st.cols, np, data[float64](out), g.rows(), &st.dwPart)
	}
	return out, nil
}

// convGradInput is ∂L/∂x: the patches' gradient wᵀ·G, added back into
// the input positions (col2im), a chunk of examples at a time.
type convGradInput struct {
	base
	gpu onGPU // on a device: see deviceDo
	fwd *convOp
	out buffer
}

func (op *convGradInput) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	g := op.fwd.g
	return tensor.Shape{g.n, g.c, g.h, g.w}, nil
}

func (op *convGradInput) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if op.dev != nil {
		return op.deviceDo(vals)
	}
	gm, err := dense(vals[1], op.name)
	if err != nil {
		return nil, err
	}
	g := op.fwd.g
	out := op.out.get(gm.Dtype(), true, g.n, g.c, g.h, g.w)
	switch gm.Dtype() {
	case tensor.Float32:
		convBackInput(g, state[convState[float32]](&op.fwd.state), vals[0].Data().([]float32), data[float32](gm), data[float32](out))
	default:
		convBackInput(g, state[convState[float64]](&op.fwd.state), vals[0].Data().([]float64), data[float64](gm), data[float64](out))
	}
	return out, nil
}

// convBackInput computes ∂L/∂x from the output gradient gm (channel-major)
// into dx, a chunk of examples at a time: the patches' gradient wᵀ·G,
// then col2im.
//
// Where col2im reads every entry of the patches' gradient (no tap in the
// padding) in float32, it clears each entry as it reads it, and the next
// product adds into the cleared buffer (β = 1) instead of having the BLAS
// clear it first (β = 0, a pass of its own over the buffer: most of the
// 4.6% of LeNet's step that OpenBLAS spent clearing outputs): the same
// additions onto the same zeros. The buffer, which only this function
// uses, is then all +0 between calls: zero when allocated, and cleared by
// every col2im after.
func convBackInput[T float](g geometry, st *convState[T], w, gm, dx []T) {
	p, rows, np := g.positions(), g.rows(), g.n*g.positions()
	if st32, ok := any(st).(*convState[float32]); ok && st32.wino {
		if winoBlocked(g) {
			winoBlockedInputGrad(g, st32, any(gm).([]float32), any(w).([]float32), any(dx).([]float32))
			return
		}
		winoInputGrad(g, st32, any(w).([]float32), any(dx).([]float32))
		return
	}
	if st32, ok := any(st).(*convState[float32]); ok && st32.pooledRows {
		pooledInputGrad(g, st32, any(w).([]float32), any(gm).([]float32), np, st32.pooledPer, any(dx).([]float32))
		return
	}
	if st32, ok := any(st).(*convState[float32]); ok && tapsBack(g) {
		tapInputGrad(g, st32, any(w).([]float32), any(gm).([]float32), np, any(dx).([]float32))
		return
	}
	chunk := g.chunk()
	taps := tapsOf(g)
	_, float32s := any(w).([]float32)
	clears := float32s && taps.runs != nil && !slices.Contains(taps.covered, false)
	planeRows := asm.UseAVX512 && g.stride == 1 && g.pad == 0 && g.w <= 16
	var beta T // 0: the BLAS clears the buffer
	if clears {
		beta = 1
	}
	for n0 := 0; n0 < g.n; n0 += chunk {
		n1 := min(g.n, n0+chunk)
		cols := (n1 - n0) * p
		dcols := st.dcols.get(rows * cols)
		gemm(blas.Trans, blas.NoTrans, rows, cols, g.o, w, rows, gm[n0*p:], np, beta, dcols, cols)
		// Each image's planes of dx are its own: a helper may take half
		// of the chunk's images.
		helpRange(n1-n0, rows*cols, func(a, b int) {
			if clears && planeRows {
				col2imPlanes(g, any(dcols).([]float32), cols, n0, a, b, any(dx).([]float32))
				return
			}
			if clears {
				col2imRuns(g, taps, dcols[a*p:], cols, n0+a, n0+b, dx, true)
				return
			}
			col2imTaps(g, taps, dcols[a*p:], cols, n0+a, n0+b, dx)
		})
	}
}

// biasGrad is ∂L/∂b: the row sums of G (O × positions), or with
// byColumn the column sums of G (batch × O), in the bias's shape.
type biasGrad struct {
	base
	gpu      onGPU // on a device: see deviceDo
	shape    tensor.Shape
	byColumn bool
	out      buffer
	summed   *convGradMatrix // when set, the op whose run made the sums
}

func (op *biasGrad) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return op.shape.Clone(), nil
}

func (op *biasGrad) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if op.dev != nil {
		return op.deviceDo(vals)
	}
	gm, err := dense(vals[0], op.name)
	if err != nil {
		return nil, err
	}
	out := op.out.get(gm.Dtype(), false, op.shape...)
	if m := op.summed; m != nil {
		setFloats(out, m.rowSums)
		return out, nil
	}
	rows, cols := gm.Shape()[0], gm.Shape()[1]
	switch gm.Dtype() {
	case tensor.Float32:
		sums(data[float32](gm), rows, cols, op.byColumn, data[float32](out))
	default:
		sums(data[float64](gm), rows, cols, op.byColumn, data[float64](out))
	}
	return out, nil
}

// sums sets dst[r] to the sum of row r of m (rows × cols), or with
// byColumn dst[c] to the sum of column c, accumulated in float64.
func sums[T float](m []T, rows, cols int, byColumn bool, dst []T) {
	if byColumn {
		for c := range cols {
			var s float64
			for r := range rows {
				s += float64(m[r*cols+c])
			}
			dst[c] = T(s)
		}
		return
	}
	for r := range rows {
		// Their order shows in the last bits of a float64 result; in a
		// float32 one only for a sum within about 2⁻²⁹ of a rounding
		// boundary.
		var s [4]float64
		asm.AddTo4(&s, m[r*cols:(r+1)*cols])
		dst[r] = T((s[0] + s[1]) + (s[2] + s[3]))
	}
}
