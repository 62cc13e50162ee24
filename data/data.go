// Package data defines what the trainer asks of a multi-task data set and
// the shuffled batches it draws from one. Each data set lives in its own
// package (data/multimnist, data/celeba, data/sarcos, and a user's own
// files in data/files) and implements Dataset; this package holds what
// they share: the task description, the batch iterator, a prefix view for
// quick runs (Limit), the errors that mark bad or missing files, and where
// data files are looked for on disk.
//
// The toy targets of the paper are densities, not data sets; they live in
// package particles/toy.
package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// SettingError is a loader's error for a setting that asks for more than
// the data holds: the setting is at fault, not the files. Setting is its
// name in a run's settings (the flag without its dash).
type SettingError struct {
	Setting string
	Value   int
	Reason  string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("-%s %d: %s", e.Setting, e.Value, e.Reason)
}

// Kind says how a task's target is read and scored.
type Kind int

const (
	// Classification targets are class indices 0..Classes-1.
	Classification Kind = iota
	// Regression targets are real values.
	Regression
)

func (k Kind) String() string {
	switch k {
	case Classification:
		return "classification"
	case Regression:
		return "regression"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Task describes one of a data set's tasks.
type Task struct {
	Name    string
	Kind    Kind
	Classes int // number of classes; 0 for regression

	// ClassNames, when set, has one readable name per class, for
	// previews and reports.
	ClassNames []string

	// Shift and Scale, for a regression task, map its targets from the
	// data's units to the scale the network learns on: it is trained on
	// (y − Shift)/Scale, and its outputs are mapped back, Shift +
	// Scale·output, before anything scores or reports them. Scale 0
	// leaves the targets as they are.
	Shift, Scale float64
	// Log, for a regression task whose targets are positive, trains on
	// their logarithm: Shift and Scale standardise log y, and outputs
	// are mapped back with exp, so that no prediction is negative.
	Log bool
}

// Standardize maps a target of t from the data's units to the scale the
// network learns on (see Task.Shift).
func (t Task) Standardize(y float64) float64 {
	if t.Log {
		y = math.Log(y)
	}
	if t.Scale == 0 {
		return y
	}
	return (y - t.Shift) / t.Scale
}

// Unstandardize maps a network's output for t back to the data's units.
func (t Task) Unstandardize(out float64) float64 {
	if t.Scale != 0 {
		out = t.Shift + t.Scale*out
	}
	if t.Log {
		return math.Exp(out)
	}
	return out
}

// Dataset is a multi-task data set with random access to its examples.
type Dataset interface {
	// Name is the data set's name, e.g. "multi-mnist/train".
	Name() string
	// Tasks lists the tasks; every example has one target per task.
	Tasks() []Task
	// InputShape is the shape of one input, channels first for images
	// (e.g. [1 36 36]).
	InputShape() []int
	// Len is the number of examples.
	Len() int
	// Example writes example i's input, scaled as the model reads it,
	// into x (length InputSize(d)) and its targets, one per task, into y.
	// A class index is written as its float32 value, which is exact. A
	// missing target is NaN: that task's loss and scores skip the
	// example, which still trains the other tasks.
	Example(i int, x, y []float32) error
}

// InputSize is the number of values in one input of d.
func InputSize(d Dataset) int {
	n := 1
	for _, s := range d.InputShape() {
		n *= s
	}
	return n
}

// Batch is a set of examples laid out for a model.
type Batch struct {
	// Index holds the examples' indices in the data set.
	Index []int
	// Inputs holds the inputs one after another: len(Index)·InputSize.
	Inputs []float32
	// Targets[j][i] is task j's target for example Index[i].
	Targets [][]float32
}

// Size is the number of examples in b.
func (b *Batch) Size() int { return len(b.Index) }

// Batches iterates over one epoch of a data set in batches. Its order is a
// function of the seed and the epoch number only, so any epoch can be
// replayed (for an exact resume) without replaying the ones before it.
// The batch it returns is reused by the next call to Next.
type Batches struct {
	d     Dataset
	order []int
	size  int
	pos   int
	batch Batch
	y     []float32 // one example's targets
	err   error
}

// Epoch returns the batches of epoch number epoch (0-based) of d, in an
// order shuffled by seed and epoch, or in index order if shuffle is false.
// The last batch is smaller when size does not divide d.Len().
func Epoch(d Dataset, size int, shuffle bool, seed uint64, epoch int) *Batches {
	if size < 1 {
		panic(fmt.Sprintf("data: batch size %d", size))
	}
	order := make([]int, d.Len())
	for i := range order {
		order[i] = i
	}
	if shuffle {
		rng := rand.New(rand.NewPCG(seed, shuffleStream+uint64(epoch)))
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	tasks := len(d.Tasks())
	b := &Batches{d: d, order: order, size: size, y: make([]float32, tasks)}
	b.batch.Inputs = make([]float32, 0, size*InputSize(d))
	b.batch.Targets = make([][]float32, tasks)
	return b
}

// shuffleStream separates the shuffling random stream from the other uses
// of the run's seed (data generation, initialisation, sampling).
const shuffleStream = 0x73687566666c6500

// Len is the number of batches in the epoch.
func (b *Batches) Len() int { return (len(b.order) + b.size - 1) / b.size }

// Next loads the next batch and reports whether there was one. After it
// returns false, Err tells whether the epoch ended or an example failed.
func (b *Batches) Next() bool {
	if b.err != nil || b.pos >= len(b.order) {
		return false
	}
	idx := b.order[b.pos:min(b.pos+b.size, len(b.order))]
	b.pos += len(idx)
	in := InputSize(b.d)
	bt := &b.batch
	bt.Index = idx
	bt.Inputs = bt.Inputs[:len(idx)*in]
	for j := range bt.Targets {
		bt.Targets[j] = grow(bt.Targets[j], len(idx))
	}
	for i, ex := range idx {
		if err := b.d.Example(ex, bt.Inputs[i*in:(i+1)*in], b.y); err != nil {
			b.err = fmt.Errorf("%s: example %d: %w", b.d.Name(), ex, err)
			return false
		}
		for j, v := range b.y {
			bt.Targets[j][i] = v
		}
	}
	return true
}

// Skip passes over the next n batches without loading them, to resume an
// epoch where it was left; past the epoch's end it leaves none. A
// negative n is a caller's error: its position comes from a checked
// checkpoint.
func (b *Batches) Skip(n int) {
	if n < 0 {
		panic(fmt.Sprintf("data: skipping %d batches", n))
	}
	b.pos += min(n, (len(b.order)-b.pos+b.size-1)/b.size) * b.size
	b.pos = min(b.pos, len(b.order))
}

// Batch is the batch loaded by the last successful call to Next.
func (b *Batches) Batch() *Batch { return &b.batch }

// Err is the error that stopped the iteration, or nil.
func (b *Batches) Err() error { return b.err }

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// Limit returns a view of the first n examples of d, or d itself when it
// has no more than n.
func Limit(d Dataset, n int) Dataset {
	if n < 0 || n >= d.Len() {
		return d
	}
	return prefix{d, n}
}

type prefix struct {
	Dataset
	n int
}

func (p prefix) Len() int { return p.n }

func (p prefix) Example(i int, x, y []float32) error {
	if i >= p.n {
		return fmt.Errorf("example %d out of range [0, %d)", i, p.n)
	}
	return p.Dataset.Example(i, x, y)
}

// DirEnv is the environment variable that names the data directory when no
// -data-dir flag is given.
const DirEnv = "MTSGD_DATA_DIR"

// Dir resolves the data directory: flag if not empty, else $MTSGD_DATA_DIR,
// else mtsgd under the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache on Linux). The directory need not exist.
func Dir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no data directory: set -data-dir or $%s (%w)", DirEnv, err)
	}
	return filepath.Join(cache, "mtsgd"), nil
}

// ErrMissing marks errors about data files that are not where they were
// looked for; the message says which files, where, and how to get them.
var ErrMissing = errors.New("data files missing")

// ErrInvalid marks errors about data files whose content is wrong: a
// malformed file, an array of the wrong shape or type, a label out of
// range, a NaN input. The message names the file, the array and the
// index; the commands report it as bad input (status 2).
var ErrInvalid = errors.New("invalid data file")
