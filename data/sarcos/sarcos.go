// Package sarcos is the SARCOS inverse-dynamics data set (Vijayakumar &
// Schaal, 2000) as the paper's regression experiment uses it: 21 inputs
// (7 joint positions, velocities and accelerations of a robot arm) and 7
// targets (the joint torques), each target one task.
//
// The files are the official sarcos_inv.mat (44,484 rows) and
// sarcos_inv_test.mat (4,449 rows), MATLAB MAT-files holding one 28-column
// double matrix each (variables sarcos_inv and sarcos_inv_test); the same
// matrices as CSV files (sarcos_inv.csv, sarcos_inv_test.csv: 28 numbers
// per line, no header) work too. They are looked for under DATA/sarcos.
//
// The split and scaling follow the authors' code: the first 4,448 rows of
// sarcos_inv are the validation set and the remaining 40,036 the training
// set; sarcos_inv_test is the test set. Columns 0-20 are inputs, used as
// they are; each target column is divided by its 90th percentile on the
// training rows (numpy's default linear interpolation).
package sarcos

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/mat5"
	"github.com/mtsgd/mtsgd/internal/regfile"
)

// Shape of the data.
const (
	Inputs     = 21
	Targets    = 7
	Columns    = Inputs + Targets
	Validation = 4448 // leading rows of sarcos_inv held out
)

// Name is the data set's name for -dataset.
const Name = "sarcos"

// Subdir is the data set's directory under the data directory.
const Subdir = "sarcos"

// Set is one split. It implements data.Dataset.
type Set struct {
	name    string
	inputs  []float32 // Len()·Inputs
	targets []float32 // Len()·Targets, scaled
}

func (s *Set) Name() string      { return s.name }
func (s *Set) InputShape() []int { return []int{Inputs} }
func (s *Set) Len() int          { return len(s.inputs) / Inputs }
func (s *Set) Tasks() []data.Task {
	tasks := make([]data.Task, Targets)
	for j := range tasks {
		tasks[j] = data.Task{Name: fmt.Sprintf("torque%d", j+1), Kind: data.Regression}
	}
	return tasks
}

// Example writes row i's inputs into x and its scaled targets into y.
func (s *Set) Example(i int, x, y []float32) error {
	if i < 0 || i >= s.Len() {
		return fmt.Errorf("example %d out of range [0, %d)", i, s.Len())
	}
	copy(x, s.inputs[i*Inputs:(i+1)*Inputs])
	copy(y, s.targets[i*Targets:(i+1)*Targets])
	return nil
}

// Splits are the three parts of the data set.
type Splits struct {
	Train, Valid, Test *Set
	// Scale is what each target column was divided by.
	Scale [Targets]float64
}

// Load reads the two files under dataDir/sarcos and splits and scales
// them.
func Load(dataDir string) (*Splits, error) {
	dir := filepath.Join(dataDir, Subdir)
	train, err := readMatrix(dir, "sarcos_inv")
	if err != nil {
		return nil, err
	}
	test, err := readMatrix(dir, "sarcos_inv_test")
	if err != nil {
		return nil, err
	}
	if train.Rows <= Validation {
		return nil, fmt.Errorf("%s: %d rows, need more than the %d validation rows", train.Name, train.Rows, Validation)
	}
	var sp Splits
	for j := range Targets {
		col := make([]float64, 0, train.Rows-Validation)
		for i := Validation; i < train.Rows; i++ {
			col = append(col, train.At(i, Inputs+j))
		}
		q := Quantile(col, 0.9)
		if q == 0 || math.IsNaN(q) || math.IsInf(q, 0) {
			return nil, fmt.Errorf("%s: target %d has 90th percentile %v on the training rows; cannot scale by it", train.Name, j+1, q)
		}
		sp.Scale[j] = q
	}
	sp.Valid = newSet("sarcos/valid", train, 0, Validation, sp.Scale)
	sp.Train = newSet("sarcos/train", train, Validation, train.Rows, sp.Scale)
	sp.Test = newSet("sarcos/test", test, 0, test.Rows, sp.Scale)
	return &sp, nil
}

func newSet(name string, m *mat5.Matrix, from, to int, scale [Targets]float64) *Set {
	s := &Set{name: name}
	for i := from; i < to; i++ {
		for j := range Inputs {
			s.inputs = append(s.inputs, float32(m.At(i, j)))
		}
		for j := range Targets {
			s.targets = append(s.targets, float32(m.At(i, Inputs+j)/scale[j]))
		}
	}
	return s
}

// Quantile is numpy's default quantile: linear interpolation between the
// order statistics at positions q·(n−1). It sorts a copy of v.
func Quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

// readMatrix reads dir/base.mat, or else dir/base.csv, and checks that it
// is a matrix of Columns columns.
func readMatrix(dir, base string) (*mat5.Matrix, error) {
	matPath, csvPath := filepath.Join(dir, base+".mat"), filepath.Join(dir, base+".csv")
	var m *mat5.Matrix
	path := matPath
	ms, err := mat5.ReadFile(matPath)
	switch {
	case err == nil:
		m, err = pick(ms, base)
	case errors.Is(err, fs.ErrNotExist):
		path = csvPath
		m, err = readCSV(csvPath)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: SARCOS file %s not found; looked for %s and %s. Get sarcos_inv.mat and sarcos_inv_test.mat from http://www.gaussianprocess.org/gpml/data/ and put them in %s (set the data directory with -data-dir or $%s)",
				data.ErrMissing, base, matPath, csvPath, dir, data.DirEnv)
		}
	}
	if err != nil {
		return nil, err
	}
	if m.Cols != Columns || m.Rows == 0 {
		return nil, fmt.Errorf("%s: a %d×%d matrix, SARCOS has %d columns (21 inputs, 7 torques)", path, m.Rows, m.Cols, Columns)
	}
	for i, v := range m.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: row %d column %d is %v", path, i/m.Cols+1, i%m.Cols+1, v)
		}
	}
	m.Name = path
	return m, nil
}

// pick chooses the variable called name, or the file's only variable.
func pick(ms []mat5.Matrix, name string) (*mat5.Matrix, error) {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i], nil
		}
	}
	if len(ms) == 1 {
		return &ms[0], nil
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return nil, fmt.Errorf("no variable %q among %d (%s)", name, len(ms), strings.Join(names, ", "))
}

// readCSV reads a matrix of numbers, one row per line, comma-separated.
func readCSV(path string) (*mat5.Matrix, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	m := &mat5.Matrix{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if m.Cols == 0 {
			m.Cols = len(rec)
		}
		for col, field := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(field), 64)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d column %d: %q is not a number", path, line, col+1, field)
			}
			m.Data = append(m.Data, v)
		}
		m.Rows++
	}
	return m, nil
}
