package ops

import "fmt"

// SavedPass holds what a recording's ops kept from one run (their outputs,
// patches, argmaxes, inputs), set aside so that other runs can go
// between that run and the gradients replayed from it.
//
// Package engine uses it for a heads-first step: its first evaluation
// of each particle runs the trunk forward and moves on to the next
// particle; after every head has moved, the second evaluation replays
// each particle's trunk from its SavedPass instead of running it again. The
// memory is one set of the trunk's kept values per SavedPass (SavedPassBytes:
// about 41 MB for a LeNet particle at batch 256 in float32). A leaf
// convolution's patches (the images') are not set aside: the runs in
// between must read the same leaf input.
type SavedPass struct {
	parts []any // per recorded op, in its own form
}

// exchanger is a recorded op whose kept values can be set aside.
type exchanger interface {
	// keepForReplay makes the op keep, from its next run, all that a
	// replay's gradients read, as if it had been differentiated.
	keepForReplay()
	// exchange swaps the values the op kept from its last run with those
	// in *part (none the first time: the op then allocates anew).
	exchange(part *any)
	// savedSize is how many values exchange sets aside once the op has run:
	// floats (of the op's dtype) and int32s.
	savedSize() (floats, ints int)
}

// KeepForReplay makes every op of r keep, from its next run, what the
// gradients of a replay read, and so be ready for Exchange: a graph
// built without gradients (a heads-only one) otherwise keeps neither
// patches nor argmaxes. It fails, changing nothing, unless every op of
// r can be set aside.
func (r *Recording) KeepForReplay() error {
	for _, op := range r.ops {
		if _, ok := op.(exchanger); !ok {
			return fmt.Errorf("ops: %v cannot set its kept values aside", op)
		}
		if op.(interface{ onDevice() bool }).onDevice() {
			return fmt.Errorf("ops: %v is on a device", op)
		}
	}
	for _, op := range r.ops {
		op.(exchanger).keepForReplay()
	}
	return nil
}

// Exchange swaps what r's ops kept from their last run with what k
// holds: after a run, Exchange(k) sets the run's values aside in k (and
// gives the ops k's earlier ones, to overwrite); before the replay of that
// run, Exchange(k) gives them back. The swap moves no values. r must
// have been made ready by KeepForReplay.
func (r *Recording) Exchange(k *SavedPass) {
	if len(k.parts) != len(r.ops) {
		k.parts = make([]any, len(r.ops))
	}
	for i, op := range r.ops {
		op.(exchanger).exchange(&k.parts[i])
	}
}

// SavedPassBytes is the memory one SavedPass of r holds once r's ops have run, for
// values of elem bytes (4 for float32, 8 for float64).
func (r *Recording) SavedPassBytes(elem int) (int, error) {
	bytes := 0
	for _, op := range r.ops {
		e, ok := op.(exchanger)
		if !ok {
			return 0, fmt.Errorf("ops: %v cannot set its kept values aside", op)
		}
		floats, ints := e.savedSize()
		bytes += floats*elem + ints*4
	}
	return bytes, nil
}

// swapScratch swaps s with the scratch of the same dtype held in *held.
func swapScratch[T float](s *scratch[T], held *any) {
	old, _ := (*held).(scratch[T])
	*held, *s = *s, old
}

type convSaved struct {
	out         buffer
	cols, input any // scratch[T]
}

func (op *convOp) keepForReplay() { op.keepCols = true }

// exchange sets aside the output and, unless made from a leaf input, the
// patches or, where the products read the input (directconv.go), its copy: a
// leaf input (the images) is the same for every particle a worker runs
// on a batch, and the op remakes its patches or copy when the input
// changes (convForward). Winograd's U is not set aside (a set of
// ResNet-18's filters is 67 MB): the input gradient remakes it from the
// filters after an exchange (winoInputGrad).
func (op *convOp) exchange(part *any) {
	k := state[convSaved](part)
	op.out, k.out = k.out, op.out
	if !op.inputGrad {
		return
	}
	switch st := op.state.(type) {
	case *convState[float32]:
		swapScratch(&st.cols, &k.cols)
		swapScratch(&st.input, &k.input)
		st.winoUStale = true
	case *convState[float64]:
		swapScratch(&st.cols, &k.cols)
		swapScratch(&st.input, &k.input)
	}
}

type poolSaved struct {
	out    buffer
	argmax []int32
}

func (op *convOp) savedSize() (floats, ints int) {
	floats = op.g.n * op.g.o * op.g.positions()
	st, _ := op.state.(*convState[float32])
	switch {
	case st != nil && st.wino: // V (winograd.go)
		floats += 16 * spaced(op.g.c*op.g.tiles())
	case op.inputGrad:
		floats += op.g.rows() * op.g.n * op.g.positions()
	}
	return floats, 0
}

func (op *poolOp) keepForReplay() { op.grads = true }

func (op *poolOp) exchange(part *any) {
	k := state[poolSaved](part)
	op.out, k.out = k.out, op.out
	op.argmax, k.argmax = k.argmax, op.argmax
}

func (op *poolOp) savedSize() (floats, ints int) {
	n := op.g.n * op.g.c * op.g.positions()
	return n, n
}

func (op *reluOp) keepForReplay() {}

func (op *reluOp) exchange(part *any) {
	k := state[buffer](part)
	op.out, *k = *k, op.out
}

func (op *reluOp) savedSize() (floats, ints int) { return op.size, 0 }

func (op *avgPoolOp) keepForReplay() {}

func (op *avgPoolOp) exchange(part *any) {
	k := state[buffer](part)
	op.out, *k = *k, op.out
}

func (op *avgPoolOp) savedSize() (floats, ints int) { return op.shape[0] * op.features(), 0 }

type linearSaved struct {
	out  buffer
	kept any
}

func (op *linearOp) keepForReplay() { op.keep = true }

func (op *linearOp) exchange(part *any) {
	k := state[linearSaved](part)
	op.outBuf, k.out = k.out, op.outBuf
	op.kept, k.kept = k.kept, op.kept
}

// held counts the output and the kept input and output (x and y).
func (op *linearOp) savedSize() (floats, ints int) {
	return op.n*op.out + op.n*op.in + op.n*op.out, 0
}

// Every op that can replay can be set aside, except batch
// normalisation, whose batch statistics the graph reads after its run.
var (
	_ exchanger = (*convOp)(nil)
	_ exchanger = (*poolOp)(nil)
	_ exchanger = (*reluOp)(nil)
	_ exchanger = (*avgPoolOp)(nil)
	_ exchanger = (*linearOp)(nil)
)
