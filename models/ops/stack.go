package ops

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// StackMaxFilters is the most filters a convolution may have for its
// filter gradients to be stacked (StackFilterGrads). A layer with few
// filters makes a filter-gradient product with few rows, which runs far
// below the machine's rate and reads the whole patch matrix for little
// arithmetic; stacking K runs' output gradients gives one product with K
// times the rows, which reads the patches once (on LeNet's layers, 10 and
// 20 filters, two tasks' products took about the time of one; see
// BenchmarkLeNetProducts). Wider layers gain little and their stacks
// would cost memory.
const StackMaxFilters = 63

// StackFilterGrads arms r for the next runs runs of graphs that record
// or replay it: the filter gradient of each of its
// convolutions with at most StackMaxFilters filters is not multiplied
// out at each run. The run's output gradient is kept in its place in a
// stack, in the order of the runs, the gradient node holds zeros, and
// FlushFilterGrads then computes every run's filter gradient in one
// product per convolution (StackedFilterGrad reads them). Package engine
// arms it for the K trunk passes of a particle's step: the step graph's,
// for the first task, then the trunk graph's for each other, all
// reading the same patches.
//
// Each filter gradient's entry is the same dot product over the batch's
// positions, whatever the number of rows: with gonum's BLAS the results
// are those of one product per run to the bit; OpenBLAS splits a product
// with more rows differently, which changes the order of its sums
// (TestStackedFilterGrads bounds the difference). runs = 0 disarms r
// without computing anything.
func (r *Recording) StackFilterGrads(runs int) {
	for _, op := range r.ops {
		c, ok := op.(*convOp)
		if !ok || c.dev != nil || !c.keepCols || c.g.o > StackMaxFilters || c.across.runs > 0 {
			continue
		}
		c.stackRuns, c.stackFilled, c.stackDone, c.shareRuns = runs, 0, 0, runs
	}
}

// FlushFilterGrads computes the filter gradients r's armed convolutions
// kept since StackFilterGrads, and disarms r. It fails unless every
// armed convolution kept as many runs as it was armed for.
func (r *Recording) FlushFilterGrads() error {
	var err error
	for _, op := range r.ops {
		c, ok := op.(*convOp)
		if !ok || c.stackRuns == 0 || c.across.runs > 0 {
			continue
		}
		if e := c.flush(); err == nil {
			err = e
		}
	}
	return err
}

// flush computes the filter gradients c kept since it was armed, and
// disarms it.
func (c *convOp) flush() error {
	runs, filled := c.stackRuns, c.stackFilled
	c.stackRuns, c.stackFilled = 0, 0
	if filled != runs {
		return fmt.Errorf("ops: %s: %d of the %d stacked runs kept their filter gradients", c.name, filled, runs)
	}
	switch st := c.state.(type) {
	case *convState[float32]:
		flushStack(c.g, st, runs, c.shareRuns)
	case *convState[float64]:
		flushStack(c.g, st, runs, c.shareRuns)
	}
	c.stackDone = runs
	return nil
}

// SharesPatches returns the filters' node of n when n is a forward
// convolution whose patches every particle's pass over one batch shares,
// so that StackAcross may stack those passes: its input is a leaf, the
// images (no gradient is taken with respect to it), it keeps its patches
// for its gradients, it runs on the CPU and has at most StackMaxFilters
// filters.
func SharesPatches(n *gorgonia.Node) (filters *gorgonia.Node, ok bool) {
	c, ok := n.Op().(*convOp)
	if !ok || c.twin != nil || c.dev != nil || !c.keepCols || c.inputGrad || c.g.o > StackMaxFilters {
		return nil, false
	}
	inputs := n.Graph().From(n.ID())
	for i := 0; inputs.Next(); i++ {
		if i == 1 {
			return inputs.Node().(*gorgonia.Node), true
		}
	}
	return nil, false
}

// StackAcross arms the convolution n (SharesPatches) for the passes of
// len(filters) particles over one batch, each with its filters
// (filters[r], the filters' values in their layout) and passes backward
// passes, the runs of one worker on a batch. Its patches are the same
// for every particle, so the first forward run makes every particle's
// output in one product of all their filters, and the later ones read
// theirs from it; each run checks that its filters are those it was
// armed with. The filter gradients of all particles' passes are kept
// in one stack, in the order of the runs (particle r's pass j is
// r·passes + j for StackedFilterGrad), for FlushAcross after the last.
// StackFilterGrads and FlushFilterGrads leave n alone while it is armed;
// StackAcross(n, nil, 0) disarms it.
//
// Each output and filter-gradient entry is the same dot product as
// without it, up to the order of its sums: OpenBLAS orders them by the
// product's shape, gonum's BLAS the same way for any number of rows
// until a product has 4 blocks of 64×64 outputs, which filter gradients
// of more than 64 rows reach (TestStackAcross; engine's
// TestStackAcrossParticlesChangesNothing).
func StackAcross(n *gorgonia.Node, filters [][]float64, passes int) error {
	if _, ok := SharesPatches(n); !ok {
		return fmt.Errorf("ops: %v is not a convolution whose patches its runs share", n)
	}
	c := n.Op().(*convOp)
	runs := len(filters)
	if runs == 0 || passes == 0 {
		c.across.runs, c.across.passes, c.across.next = 0, 0, 0
		c.stackRuns, c.stackFilled = 0, 0
		return nil
	}
	size := c.g.o * c.g.rows()
	for r, f := range filters {
		if len(f) != size {
			return fmt.Errorf("ops: %s: particle %d has %d filter values, want %d", c.name, r, len(f), size)
		}
	}
	switch n.Dtype() {
	case tensor.Float32:
		armAcross(state[convState[float32]](&c.state), filters, size)
	case tensor.Float64:
		armAcross(state[convState[float64]](&c.state), filters, size)
	default:
		return fmt.Errorf("ops: %s: %v filters", c.name, n.Dtype())
	}
	c.across.runs, c.across.passes, c.across.next = runs, passes, 0
	c.stackRuns, c.stackFilled, c.stackDone, c.shareRuns = runs*passes, 0, 0, passes
	return nil
}

// AcrossBytes is the memory StackAcross holds for the convolution n
// (SharesPatches) armed for runs particles of passes passes each, for
// values of elem bytes: their filters, their forward product and their
// output gradients' stack.
func AcrossBytes(n *gorgonia.Node, runs, passes, elem int) int {
	c, ok := n.Op().(*convOp)
	if !ok {
		return 0
	}
	g := c.g
	return elem * runs * g.o * (g.rows() + (1+passes)*g.n*g.positions())
}

func armAcross[T float](st *convState[T], filters [][]float64, size int) {
	w := st.acrossW.get(len(filters) * size)
	for r, f := range filters {
		for i, v := range f {
			w[r*size+i] = T(v)
		}
	}
}

// FlushAcross computes the filter gradients of every pass n kept since
// StackAcross and disarms n; StackedFilterGrad then reads them. It fails
// unless every particle ran every pass.
func FlushAcross(n *gorgonia.Node) error {
	c, ok := n.Op().(*convOp)
	if !ok || c.across.runs == 0 {
		return fmt.Errorf("ops: %v is not armed across particles", n)
	}
	c.across.runs, c.across.passes, c.across.next = 0, 0, 0
	return c.flush()
}

// acrossForward is the forward run of the next particle armed by
// StackAcross: at the first, the product of every particle's filters
// with the batch's patches; then the particle's rows of it, plus its
// bias, into out. Where the product reads the images rather than patches
// (tapsInput), stacking the particles' filters saves nothing and each
// particle's product is made at its own run, a chunk at a time, the same
// entries (each is its filter row's own chain).
func acrossForward[T float](op *convOp, st *convState[T], x, w, bias, out []T) error {
	g, r := op.g, op.across.next
	if r >= op.across.runs {
		return fmt.Errorf("ops: %s: more forward runs than the %d particles armed", op.name, op.across.runs)
	}
	size, cols := g.o*g.rows(), g.n*g.positions()
	if !slices.Equal(w, st.acrossW[r*size:(r+1)*size]) {
		return fmt.Errorf("ops: %s: particle %d's filters are not those it was armed with", op.name, r)
	}
	if r > 0 && !slices.Equal(st.input, x) {
		return fmt.Errorf("ops: %s: particle %d's input is not the batch the first one ran", op.name, r)
	}
	poolTarget(op, st)
	if tapsInput(op, st, x) {
		tapChunks(op, st, x, w, bias, out)
		op.across.next++
		return nil
	}
	if r == 0 {
		prod := st.acrossProd.get(op.across.runs * g.o * cols)
		patches := batchPatches(op, st, x)
		gemm(blas.NoTrans, blas.NoTrans, op.across.runs*g.o, cols, g.rows(), st.acrossW, g.rows(), patches, cols, 0, prod, cols)
	}
	unfoldInto(op, st, st.acrossProd[r*g.o*cols:], 0, g.n, bias, out)
	op.across.next++
	return nil
}

// flushStack is ∂L/∂w of every run at once: the runs' output gradients
// (runs·O × n·positions) times the patches' transpose, or, where the
// rows hold pools' gradients (pooledgrad.go), from those, runs of one
// particle in groups of share.
func flushStack[T float](g geometry, st *convState[T], runs, share int) {
	np := g.n * g.positions()
	dw := st.stackDW.get(runs * g.o * g.rows())
	if rows, ok := any(st).(*convState[float32]); ok && rows.pooledRows && rows.inputHWC {
		pooledFilterGradHWC(g, rows.pooledPer, rows.stack.get(runs*g.o*np), np, runs*g.o, rows.input, any(dw).([]float32), g.rows())
		return
	}
	if rows, ok := any(st).(*convState[float32]); ok && rows.pooledRows {
		pooledFilterGrad(g, rows.pooledPer, rows.stack.get(runs*g.o*np), np, runs*g.o, share, rows.input, any(dw).([]float32), g.rows())
		return
	}
	if st.tapped {
		tapGradient(g, st, st.stack.get(runs*g.o*np), runs*g.o, dw)
		return
	}
	sumOverPositions(runs*g.o, g.rows(), np, st.stack.get(runs*g.o*np), np, st.cols, np, dw, g.rows(), &st.dwPart)
}

// keep stores the output gradient gm of one run in the stack, in place
// of computing its filter gradient: gm is already there when the
// gradient matrix was written into the run's slot (nextSlot).
func (c *convOp) keep(gm *tensor.Dense) error {
	if c.stackFilled >= c.stackRuns {
		return fmt.Errorf("ops: %s: more runs than the %d stacked", c.name, c.stackRuns)
	}
	switch gm.Dtype() {
	case tensor.Float32:
		keepIn(c, state[convState[float32]](&c.state), gm)
	default:
		keepIn(c, state[convState[float64]](&c.state), gm)
	}
	c.stackFilled++
	return nil
}

func keepIn[T float](c *convOp, st *convState[T], gm *tensor.Dense) {
	if i := c.stackFilled; i < len(st.slots) && st.slots[i].t == gm && st.slots[i].at == &stackSlot(c, st)[0] {
		return // written there by convGradMatrix (nextSlot)
	}
	copy(stackSlot(c, st), data[T](gm))
}

// stackSlot is the stack's place for the next run's output gradient.
func stackSlot[T float](c *convOp, st *convState[T]) []T {
	size := c.g.o * c.g.n * c.g.positions()
	return st.stack.get(c.stackRuns * size)[c.stackFilled*size : (c.stackFilled+1)*size]
}

// slotTensor is a tensor over stackSlot, kept per slot while the stack
// stays where it is.
func slotTensor[T float](c *convOp, st *convState[T]) *tensor.Dense {
	return st.slots.over(c.stackFilled, stackSlot(c, st), c.g.o, c.g.n*c.g.positions())
}

// views are tensors over parts of a buffer, kept per index while the
// part stays where it is, so that a step makes none.
type views[T float] []struct {
	t  *tensor.Dense
	at *T // the part's first value
}

// over returns view i over part, with shape.
func (v *views[T]) over(i int, part []T, shape ...int) *tensor.Dense {
	for len(*v) <= i {
		*v = append(*v, struct {
			t  *tensor.Dense
			at *T
		}{})
	}
	w := &(*v)[i]
	if w.t == nil || w.at != &part[0] {
		w.t, w.at = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(part)), &part[0]
	}
	return w.t
}

// nextSlot returns, while c's filter gradients are stacked, a tensor of
// the output gradient matrix's shape (O × batch·positions) whose values
// are the stack's place for the next run, so that the gradient matrix is
// written there and not copied; nil otherwise (or on a device).
func (c *convOp) nextSlot(dt tensor.Dtype) *tensor.Dense {
	if c == nil || c.dev != nil || c.stackRuns == 0 || c.stackFilled >= c.stackRuns {
		return nil
	}
	switch dt {
	case tensor.Float32:
		return slotTensor(c, state[convState[float32]](&c.state))
	case tensor.Float64:
		return slotTensor(c, state[convState[float64]](&c.state))
	}
	return nil
}

// StackedFilterGrad returns, after FlushFilterGrads, run's filter
// gradient for the gradient node n, in the filters' shape, or false when
// n is not the filter gradient of a convolution whose runs were stacked.
// The tensor holds the flush's result until the next.
func StackedFilterGrad(n *gorgonia.Node, run int) (*tensor.Dense, bool) {
	op, ok := n.Op().(*convGradFilters)
	if !ok {
		return nil, false
	}
	c := op.fwd
	if run < 0 || run >= c.stackDone {
		return nil, false
	}
	switch st := c.state.(type) {
	case *convState[float32]:
		return dwTensor(c.g, st, run), true
	case *convState[float64]:
		return dwTensor(c.g, st, run), true
	}
	return nil, false
}

// dwTensor is a tensor over run's part of the stacked filter gradients,
// kept per run while they stay where they are.
func dwTensor[T float](g geometry, st *convState[T], run int) *tensor.Dense {
	size := g.o * g.rows()
	return st.dwSlots.over(run, st.stackDW[run*size:(run+1)*size], g.o, g.c, g.k, g.k)
}
