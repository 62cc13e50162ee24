package files

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/npz"
)

// readSplit reads one archive: x, and y if it has one (needY: it must).
// shape, if not nil, is the input shape x must have.
func readSplit(path, split string, tasks []data.Task, shape []int, needY bool) (*Set, error) {
	f, err := npz.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s not found (a data directory holds %s, optionally %s and %s, and %s)", data.ErrMissing, path, TrainFile, ValidFile, TestFile, TasksFile)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Set{name: Name + "/" + split, path: path, tasks: tasks}
	if err := s.readInputs(f, shape); err != nil {
		return nil, err
	}
	if !f.Has("y") {
		if needY {
			return nil, fmt.Errorf("%w: %s: no array y (the targets, one column per task)", data.ErrInvalid, path)
		}
		return s, nil
	}
	if err := s.readTargets(f); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Set) bad(array, format string, args ...any) error {
	return fmt.Errorf("%w: %s: array %s: %s", data.ErrInvalid, s.path, array, fmt.Sprintf(format, args...))
}

// readInputs reads x and checks its shape (against want, if not nil),
// type and values.
func (s *Set) readInputs(f *npz.File, want []int) error {
	a, err := f.Array("x")
	if err != nil {
		return err
	}
	defer a.Close()
	dims := a.Shape
	switch len(dims) {
	case 2:
		s.shape = []int{dims[1]}
	case 3:
		s.shape = []int{1, dims[1], dims[2]}
	case 4:
		s.shape = slices.Clone(dims[1:])
	default:
		return s.bad("x", "shape %v: want N×D vectors or N×C×H×W images (N×H×W for one channel)", dims)
	}
	if dims[0] == 0 {
		return s.bad("x", "no examples (shape %v)", dims)
	}
	s.size = a.Len / dims[0]
	if s.size == 0 {
		return s.bad("x", "inputs of no values (shape %v)", dims)
	}
	s.per = 1
	if len(s.shape) == 3 {
		s.per = s.shape[1] * s.shape[2]
	}
	if want != nil && !slices.Equal(want, s.shape) {
		return s.bad("x", "inputs of shape %v, the training split's are %v", s.shape, want)
	}
	if a.DType.Kind == 'u' && a.DType.Size == 1 {
		s.bytes = make([]byte, a.Len)
		return readC(a, s.bytes, a.ReadBytes)
	}
	// Any other number type (integers, booleans, float16) is converted
	// to float32: the array's size was checked against its entry above,
	// so this allocates at most 4 bytes per byte of the file.
	s.floats = make([]float32, a.Len)
	if err := readC(a, s.floats, a.ReadFloat32); err != nil {
		return err
	}
	for k, v := range s.floats {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return s.bad("x", "example %d, element %d is %v (inputs must be finite)", k/s.size, k%s.size, v)
		}
	}
	return nil
}

// readC reads all of a into dst with read, in C order: an array stored
// in Fortran order (pandas' to_numpy, a transposed array) is reordered.
func readC[T any](a *npz.Array, dst []T, read func([]T) error) error {
	if !a.Fortran {
		return read(dst)
	}
	src := make([]T, len(dst))
	if err := read(src); err != nil {
		return err
	}
	npz.ToC(dst, src, a.Shape)
	return nil
}

// readTargets reads y and checks it against the inputs and the tasks.
func (s *Set) readTargets(f *npz.File) error {
	a, err := f.Array("y")
	if err != nil {
		return err
	}
	defer a.Close()
	k, n := len(s.tasks), s.rowCount()
	switch {
	case len(a.Shape) == 2 && a.Shape[0] == n && a.Shape[1] == k, len(a.Shape) == 1 && a.Shape[0] == n && k == 1:
	case len(a.Shape) >= 1 && a.Shape[0] != n:
		return s.bad("y", "%d rows for the %d examples of x", a.Shape[0], n)
	default:
		return s.bad("y", "shape %v: want N×%d, one column per task of %s (%s)", a.Shape, k, TasksFile, taskNames(s.tasks))
	}
	y := make([]float64, a.Len)
	if err := readC(a, y, a.ReadFloat64); err != nil {
		return err
	}
	s.y = make([]float32, len(y))
	for i, v := range y {
		if math.IsNaN(v) { // a missing label: the row trains the other tasks
			s.y[i] = float32(v)
			continue
		}
		if msg := checkTarget(s.tasks[i%k], v); msg != "" {
			return s.bad("y", "y[%d, %d] = %v%s", i/k, i%k, v, msg)
		}
		s.y[i] = float32(v)
	}
	return nil
}

// checkTarget says what is wrong with v as a target of t, to follow
// the value in a message, or "".
func checkTarget(t data.Task, v float64) string {
	switch {
	case t.Kind == data.Regression && (math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32):
		return fmt.Sprintf(": task %s's target must be a finite float32", t.Name)
	case t.Kind == data.Regression && t.Log && !(v > 0):
		return fmt.Sprintf(": task %s is positive (tasks.json), its targets must be above 0", t.Name)
	case t.Kind == data.Classification && t.Classes == 0 && (v != math.Trunc(v) || v < 0):
		// classes to be counted from the training split's labels
		return fmt.Sprintf(" is not a class of task %s (a whole number from 0)", t.Name)
	case t.Kind == data.Classification && t.Classes > 0 && (v != math.Trunc(v) || v < 0 || v >= float64(t.Classes)):
		return fmt.Sprintf(" is not a class of task %s (0..%d)", t.Name, t.Classes-1)
	}
	return ""
}

func taskNames(tasks []data.Task) string {
	names := make([]string, len(tasks))
	for j, t := range tasks {
		names[j] = t.Name
	}
	return strings.Join(names, ", ")
}
