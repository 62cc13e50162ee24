package ops

import (
	"fmt"

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
		if !ok || c.dev != nil || !c.keepCols || c.g.o > StackMaxFilters {
			continue
		}
		c.stackRuns, c.stackFilled, c.stackDone = runs, 0, 0
	}
}

// FlushFilterGrads computes the filter gradients r's armed convolutions
// kept since StackFilterGrads, and disarms r. It fails unless every
// armed convolution kept as many runs as it was armed for.
func (r *Recording) FlushFilterGrads() error {
	var err error
	for _, op := range r.ops {
		c, ok := op.(*convOp)
		if !ok || c.stackRuns == 0 {
			continue
		}
		runs, filled := c.stackRuns, c.stackFilled
		c.stackRuns, c.stackFilled = 0, 0
		if filled != runs {
			if err == nil {
				err = fmt.Errorf("ops: %s: %d of the %d stacked runs kept their filter gradients", c.name, filled, runs)
			}
			continue
		}
		switch st := c.state.(type) {
		case *convState[float32]:
			flushStack(c.g, st, runs)
		case *convState[float64]:
			flushStack(c.g, st, runs)
		}
		c.stackDone = runs
	}
	return err
}

// flushStack is ∂L/∂w of every run at once: the runs' output gradients
// (runs·O × n·positions) times the patches' transpose.
func flushStack[T float](g geometry, st *convState[T], runs int) {
	np := g.n * g.positions()
	dw := st.stackDW.get(runs * g.o * g.rows())
	gemm(blas.NoTrans, blas.Trans, runs*g.o, g.rows(), np, st.stack.get(runs*g.o*np), np, st.cols, np, 0, dw, g.rows())
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
