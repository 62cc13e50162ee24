package ops

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Copy adds a copy of x to x's graph: the same values in a node of its
// own, whose gradient is its output's. Package engine gives each task
// after the first its own copy of the features, so that each task's
// gradient with respect to them is a node of its own.
func Copy(x *gorgonia.Node) (*gorgonia.Node, error) {
	return apply(&copyOp{base: newBase("Copy", x.Dims(), x.Dims())}, x)
}

type copyOp struct {
	base
	gpu onGPU // on a device: see deviceDo
	out buffer
}

func (op *copyOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstShape(op.name, in)
}

func (op *copyOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, copyCPU[float32], copyCPU[float64])
}

// copyCPU is copyOp's run on the CPU in T.
func copyCPU[T float](op *copyOp, x *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	out := op.out.get(x.Dtype(), false, x.Shape()...)
	copy(data[T](out), data[T](x))
	return out, nil
}

func (op *copyOp) DiffWRT(int) []bool { return []bool{true} }

func (op *copyOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{grad}, nil
}

// Kept holds the values a Keep node copied in its graph's last run. On a
// device they stay there until Fetch brings them into Values.
type Kept struct {
	Values []float64

	dev   *Device       // the graph's device, nil on the CPU
	copy  *tensor.Dense // on a device: the last run's values
	stale bool          // Values are older than copy
	// skip (Skip) has a device graph's runs copy nothing; skipped says
	// the last run did so.
	skip, skipped bool
}

// Skip, on a device, makes the graph's next runs copy nothing into k
// while skip is set, for a caller that does not read it then: Fetch after
// such a run fails and OnDevice returns nil. On the CPU it does nothing.
func (k *Kept) Skip(skip bool) { k.skip = skip }

// Fetch brings the last run's values into Values; on the CPU they are
// there already.
func (k *Kept) Fetch() error {
	if k.skipped {
		return fmt.Errorf("ops: the last run kept no values (Kept.Skip)")
	}
	if !k.stale {
		return nil
	}
	if err := k.dev.Get(k.copy, k.Values); err != nil {
		return err
	}
	k.stale = false
	return nil
}

// OnDevice returns the last run's values in device memory, nil for a
// graph on the CPU. The next run overwrites them.
func (k *Kept) OnDevice() *tensor.Dense { return k.copy }

// Keep adds a node that copies x's values, in every run, into the
// returned Kept, which the caller reads after the run. Reading x's own
// value after a run is not safe (the tape machine may reuse its memory
// later in the run), and gorgonia.Read allocates a clone on every run.
func Keep(x *gorgonia.Node) (*Kept, error) {
	k := &Kept{Values: make([]float64, x.Shape().TotalSize())}
	if _, err := apply(&keepOp{base: newBase("Keep", x.Dims(), 0), kept: k}, x); err != nil {
		return nil, err
	}
	return k, nil
}

type keepOp struct {
	base
	kept *Kept
	out  buffer // on a device: the copy
}

func (op *keepOp) InferShape(...gorgonia.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

// Do copies the values. Its result is a scalar zero that nothing uses:
// returning x itself would put x's memory in a second register of the
// tape machine, which could hand it to a later op while x is live.
func (op *keepOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return run(op, vals, 0, keepCPU[float32], keepCPU[float64])
}

// keepCPU is keepOp's run on the CPU in T.
func keepCPU[T float](op *keepOp, x *tensor.Dense, _ []gorgonia.Value) (gorgonia.Value, error) {
	for i, v := range data[T](x) {
		op.kept.Values[i] = float64(v)
	}
	return scalarOf[T](0), nil
}
