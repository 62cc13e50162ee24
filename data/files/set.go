package files

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/mtsgd/mtsgd/data"
)

// Set is one split. It implements data.Dataset.
type Set struct {
	name, path string
	tasks      []data.Task
	shape      []int     // one input's
	size       int       // elements per input
	per        int       // elements per normalisation group
	bytes      []byte    // uint8 inputs, or
	floats     []float32 // float inputs
	y          []float32 // targets, rows × tasks
	index      []int     // example i is row index[i]; nil: row i
	norm       *Normalization
	columns    []string // input columns' names, from a CSV file
	ids        []string // each row's id, from a CSV file's id column
}

func (s *Set) Name() string { return s.name }

func (s *Set) Tasks() []data.Task { return s.tasks }

func (s *Set) InputShape() []int { return s.shape }

func (s *Set) Len() int {
	if s.index != nil {
		return len(s.index)
	}
	return s.rowCount()
}

// Path is the file the split was read from.
func (s *Set) Path() string { return s.path }

// IDs are the examples' identifiers, in order, from a CSV file's id
// column (Description.ID); nil without one.
func (s *Set) IDs() []string {
	if s.ids == nil || s.index == nil {
		return s.ids
	}
	ids := make([]string, len(s.index))
	for i, r := range s.index {
		ids[i] = s.ids[r]
	}
	return ids
}

// HasTargets reports whether the split has targets (y).
func (s *Set) HasTargets() bool { return s.y != nil }

func (s *Set) rowCount() int {
	if s.bytes != nil {
		return len(s.bytes) / s.size
	}
	return len(s.floats) / s.size
}

func (s *Set) rows(i int) int {
	if s.index != nil {
		return s.index[i]
	}
	return i
}

func (s *Set) raw(k int) float64 {
	if s.bytes != nil {
		return float64(s.bytes[k])
	}
	return float64(s.floats[k])
}

func (s *Set) groupName() string {
	if len(s.shape) == 1 {
		return "feature"
	}
	return "channel"
}

// Example writes example i's normalised input into x and its targets
// into y (zeros for a split without targets).
func (s *Set) Example(i int, x, y []float32) error {
	if i < 0 || i >= s.Len() {
		return fmt.Errorf("example %d out of range [0, %d)", i, s.Len())
	}
	r := s.rows(i)
	base := r * s.size
	n := s.norm
	switch {
	case n == nil || n.Kind == None:
		for p := range s.size {
			x[p] = float32(s.raw(base + p))
		}
	case n.Kind == Unit && s.bytes != nil:
		// As the built-in image data sets scale their bytes.
		for p, v := range s.bytes[base : base+s.size] {
			x[p] = float32(v) / 255
		}
	case n.Kind == Unit:
		for p, v := range s.floats[base : base+s.size] {
			x[p] = v / 255
		}
	default:
		for p := range s.size {
			g := p / s.per
			x[p] = float32((s.raw(base+p) - n.Mean[g]) / n.Std[g])
		}
	}
	k := len(s.tasks)
	if s.y == nil {
		clear(y[:k])
		return nil
	}
	copy(y, s.y[r*k:(r+1)*k])
	return nil
}

// holdOut splits n examples, drawn with seed, off s for validation; the
// training split keeps the others in their order.
func holdOut(s *Set, n int, seed uint64) (train, valid *Set, err error) {
	rows := s.Len()
	if n == AutoValid {
		n = max(1, rows/10)
	}
	if n < 0 || n >= rows {
		return nil, nil, &data.SettingError{Setting: "valid", Value: n,
			Reason: fmt.Sprintf("holding out %d of the %d examples of %s for validation leaves none to train on", n, rows, s.path)}
	}
	h := fnv.New64a()
	h.Write([]byte("files/valid"))
	perm := rand.New(rand.NewPCG(seed, h.Sum64())).Perm(rows)
	held := perm[:n]
	slices.Sort(held)
	in := make([]bool, rows)
	for _, r := range held {
		in[r] = true
	}
	var kept []int
	for r := range rows {
		if !in[r] {
			kept = append(kept, r)
		}
	}
	tr, va := *s, *s
	tr.index, va.index = kept, held
	tr.name, va.name = Name+"/train", Name+"/valid"
	return &tr, &va, nil
}

// Placeholder is a data set that stands for a run's training split when
// only its checkpoint is at hand (prediction): its shape, tasks and
// size, without examples.
func Placeholder(spec *Spec) data.Dataset { return placeholder{spec} }

type placeholder struct{ spec *Spec }

func (p placeholder) Name() string { return Name + "/train" }

func (p placeholder) Tasks() []data.Task { return p.spec.DataTasks() }

func (p placeholder) InputShape() []int { return p.spec.Shape }

func (p placeholder) Len() int { return p.spec.Train }

func (p placeholder) Example(i int, _, _ []float32) error {
	return fmt.Errorf("example %d: the training split of %s is not loaded", i, p.spec.Dir)
}
