package files

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/npz"
)

// Inputs reads a file of inputs to predict on, a chunk at a time, so
// that memory does not grow with the file: an archive's x, shaped as the
// spec's training split was (a y there is not read), or a CSV file's
// input columns (task columns there are not read).
type Inputs struct {
	path  string
	f     *npz.File
	x     *npz.Array
	whole *Set // x read whole, where it is stored in Fortran order
	csv   *csvInputs
	spec  *Spec
	tasks []data.Task
	shape []int
	n     int // examples
	done  int
}

// OpenInputs opens path, an .npz archive with x or a .csv file, and
// checks the inputs' shape and type against spec.
func OpenInputs(path string, spec *Spec) (*Inputs, error) {
	in, err := openInputs(path, spec)
	return in, specialInvalid(err)
}

// openInputs is OpenInputs but for the error of a file that is not
// regular.
func openInputs(path string, spec *Spec) (*Inputs, error) {
	if filepath.Ext(path) == ".csv" {
		in := &Inputs{path: path, spec: spec, tasks: spec.DataTasks()}
		if err := in.openCSV(); err != nil {
			return nil, err
		}
		return in, nil
	}
	f, err := npz.Open(path)
	if err != nil {
		return nil, err
	}
	in := &Inputs{path: path, f: f, spec: spec, tasks: spec.DataTasks()}
	if err := in.open(); err != nil {
		f.Close()
		return nil, err
	}
	return in, nil
}

func (in *Inputs) open() error {
	s := &Set{path: in.path}
	var err error
	if in.x, err = in.f.Array("x"); err != nil {
		return err
	}
	dims := in.x.Shape
	var shape []int
	switch len(dims) {
	case 2:
		shape = []int{dims[1]}
	case 3:
		shape = []int{1, dims[1], dims[2]}
	case 4:
		shape = slices.Clone(dims[1:])
	}
	if shape == nil || !slices.Equal(shape, in.spec.Shape) || dims[0] == 0 {
		return s.bad("x", "shape %v: the model was trained on N×%s inputs", dims, shapeString(in.spec.Shape))
	}
	in.shape, in.n = shape, dims[0]
	if in.x.Fortran {
		// Stored column by column: no chunk of examples is contiguous,
		// so the inputs are read whole (as training reads a split).
		in.x.Close()
		in.x = nil
		in.whole = &Set{path: in.path}
		return in.whole.readInputs(in.f, in.spec.Shape)
	}
	return nil
}

func shapeString(shape []int) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = fmt.Sprint(d)
	}
	return strings.Join(s, "×")
}

// Len is the number of examples in the file.
func (in *Inputs) Len() int { return in.n }

// Next reads the next chunk of at most n examples as a Set without
// targets (normalised as the spec says), or returns nil at the end.
func (in *Inputs) Next(n int) (*Set, error) {
	m := min(n, in.n-in.done)
	if m <= 0 {
		return nil, nil
	}
	s := &Set{name: fmt.Sprintf("%s[%d:%d]", filepath.Base(in.path), in.done, in.done+m), path: in.path, tasks: in.tasks,
		shape: in.shape, norm: in.spec.Input, per: 1}
	s.size = data.InputSize(s)
	if len(s.shape) == 3 {
		s.per = s.shape[1] * s.shape[2]
	}
	switch {
	case in.csv != nil:
		if err := in.csv.next(in.path, s, m); err != nil {
			return nil, err
		}
		s.ids = in.csv.ids
		if in.done+m == in.n {
			if err := in.csv.drain(in.path); err != nil {
				return nil, err
			}
		}
	case in.whole != nil && in.whole.bytes != nil:
		s.bytes = in.whole.bytes[in.done*s.size : (in.done+m)*s.size]
	case in.whole != nil:
		s.floats = in.whole.floats[in.done*s.size : (in.done+m)*s.size]
	case in.x.DType.Kind == 'u' && in.x.DType.Size == 1:
		s.bytes = make([]byte, m*s.size)
		if err := in.x.ReadBytes(s.bytes); err != nil {
			return nil, err
		}
	default:
		s.floats = make([]float32, m*s.size)
		if err := in.x.ReadFloat32(s.floats); err != nil {
			return nil, err
		}
		for k, v := range s.floats {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, s.bad("x", "example %d, element %d is %v (inputs must be finite)", in.done+k/s.size, k%s.size, v)
			}
		}
	}
	in.done += m
	return s, nil
}

// Close closes the file.
func (in *Inputs) Close() error {
	if in.csv != nil {
		return in.csv.f.Close()
	}
	if in.x != nil {
		in.x.Close()
	}
	return in.f.Close()
}
