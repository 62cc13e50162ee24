// Package files is a multi-task data set that a user brings as files: a
// directory holding train.npz and optionally valid.npz and test.npz
// (NumPy archives, numpy.savez) and tasks.json.
//
// Each archive holds two arrays: x, the inputs, N×D vectors or N×C×H×W
// images (N×H×W is read as one channel), of any number type NumPy
// writes (uint8 kept as bytes, the others read as float32); and y, the
// targets, N×K (N for one task), one column per task: class indices
// 0..classes−1 for a classification task (any number type holding whole
// numbers), real values for a regression task, NaN for a missing label.
// An array in Fortran order is read in C order.
// tasks.json names the tasks, in y's column order, and how inputs are
// normalised:
//
//	{
//	  "tasks": [
//	    {"name": "digit", "kind": "classification", "classes": 10},
//	    {"name": "torque", "kind": "regression"}
//	  ],
//	  "input": "standardize"
//	}
//
// input is standardize (the default: each channel of an image, or each
// feature of a vector, minus its mean and divided by its standard
// deviation, both computed on the training split), unit (divided by 255,
// for 0-255 pixels: what the built-in image data sets do) or none. A
// task may list "class_names"; without "classes", the training split's
// labels give them. Regression targets are standardised on the training
// split unless Options.RawTargets (the network learns (y − mean)/std;
// the engine maps its outputs back: data.Task.Shift). What the training
// split decided (normalisations, classes, categories) is part of the
// Spec a run's checkpoint records, so that evaluation and prediction on
// new inputs apply the same transform; so is the SHA-256 of each file
// read, so that a file changed since (a label, under any input) is
// named by Spec.Agrees.
//
// A split may be a CSV file instead (train.csv, valid.csv, test.csv),
// for tabular data as pandas' to_csv and R's write.csv write it: a
// header, then one example per line; the columns named as tasks are the
// targets, the others the inputs, but for an unnamed index column, the
// id column and those tasks.json ignores. The separator is found from
// the header, a UTF-8 byte-order mark is skipped (in tasks.json too),
// booleans read as 1 and 0, text columns are one-hot encoded over the
// training split's categories, string labels are classes, and a missing
// label masks its task on that row (csvschema.go). Lines are bounded by the
// header's columns.
//
// Without a validation split, Options.Valid training examples, drawn at random
// with the seed, are held out for validation; without a test split, the
// validation split is the test split too. A split's file that is there
// but cannot be opened (a dangling symlink) is an error, not no split.
//
// Everything is checked while loading, and an inconsistency (a shape or
// type, a label out of range, a non-finite input or regression target,
// splits that disagree, tasks.json) is an error wrapping data.ErrInvalid
// that names the file, the array and the index. The arrays are read
// through package data/npz, whose reads are bounded by the archive's
// size.
package files

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/regfile"
)

// Name is the data set's name for -dataset.
const Name = "files"

// File names in a data directory.
const (
	TasksFile = "tasks.json"
	TrainFile = "train.npz"
	ValidFile = "valid.npz"
	TestFile  = "test.npz"
)

// Options say how to load a data directory.
type Options struct {
	// Valid is the number of training examples held out for validation
	// when there is no valid.npz: 0 none, AutoValid a tenth.
	Valid int
	// Seed draws the held-out examples.
	Seed uint64
	// Sep is the CSV files' separator: "" finds it from each file's
	// header (",", ";" or a tab, whichever it holds most of); ",", ";",
	// "|", or "tab".
	Sep string
	// Missing is what a missing CSV input (an empty cell, NA, NaN) does:
	// MissingRefuse (MissingError, "") refuses it, naming the file, line
	// and column; MissingDrop drops the row; MissingImpute fills it from
	// the training split (missing.go). A missing target never drops its
	// row: it masks that task's loss there.
	Missing string
	// NAValues are cells read as missing besides "", "NA" and "NaN".
	NAValues []string
	// LegacyNA reads as missing the cells pandas.read_csv does ("None",
	// "null", "n/a" among them), as specs recorded before Version 2 did.
	LegacyNA bool
	// ID names the CSV id column, over tasks.json's "id".
	ID string
	// RawTargets uses regression targets as they are; by default each
	// regression task's are standardised with the training split's mean
	// and standard deviation, and its predictions mapped back.
	RawTargets bool
	// Legacy loads a data directory as a run recorded before Spec.Version
	// did: targets as they are, no column taken as the id or the index
	// by its name, and the spec records no Version.
	Legacy bool
}

// AutoValid, as Options.Valid, holds out a tenth of the training
// examples (at least one).
const AutoValid = -1

// Data are the splits of a data directory and their spec. Valid is nil
// when there is none; Test is Valid when there is no test.npz.
type Data struct {
	Train, Valid, Test *Set
	Spec               Spec
	// Notes say what loading decided that a person should see: the
	// input columns, categories and classes found, an index column
	// skipped, rows dropped, missing labels, target scales.
	Notes []string
}

// Load reads and checks the data directory dir.
func Load(dir string, o Options) (*Data, error) {
	d, err := load(dir, o)
	return d, specialInvalid(err)
}

// specialInvalid makes a file of yours that is not regular (a device, a
// pipe, a directory) bad input, as a malformed one is.
func specialInvalid(err error) error {
	if errors.Is(err, regfile.ErrNotRegular) && !errors.Is(err, data.ErrInvalid) {
		return fmt.Errorf("%w: %w", data.ErrInvalid, err)
	}
	return err
}

// load is Load but for the error of a file that is not regular.
func load(dir string, o Options) (*Data, error) {
	desc, err := ReadDescription(filepath.Join(dir, TasksFile))
	if err != nil {
		return nil, err
	}
	sep, err := ParseSep(o.Sep)
	if err != nil {
		return nil, &data.SettingError{Setting: "sep", Reason: err.Error()}
	}
	if err := checkMissing(o.Missing); err != nil {
		return nil, fmt.Errorf("%w: %w", data.ErrInvalid, err)
	}
	id := o.ID
	if id == "" {
		id = desc.ID
	}
	if o.Legacy {
		o.RawTargets = true
	}
	spec := Spec{Dir: dir, Tasks: desc.Tasks, Sep: o.Sep, Missing: o.Missing, NAValues: o.NAValues, Ignore: desc.Ignore, RawTargets: o.RawTargets && !o.Legacy, Version: SpecVersion}
	switch {
	case o.Legacy:
		spec.Version = 0
	case o.LegacyNA:
		spec.Version = 1
	}
	d := &Data{}
	rd := &reading{dir: dir, sep: sep, desc: desc, id: id, tasks: spec.DataTasks(), missing: o.Missing, legacy: o.Legacy,
		na: newNASet(o.Legacy || o.LegacyNA, o.NAValues), notes: &d.Notes}
	train, err := rd.split("train")
	if err != nil {
		return nil, err
	}
	if train == nil {
		return nil, fmt.Errorf("%w: %s has neither %s nor train.csv (a data directory holds %s or train.csv, optionally the valid and test splits, and %s)",
			data.ErrMissing, dir, TrainFile, TrainFile, TasksFile)
	}
	spec.Shape, spec.Columns = train.shape, train.columns
	if rd.csv != nil {
		spec.ID, spec.Categories = rd.csv.id, rd.csv.cats
		if len(spec.Categories) == 0 {
			spec.Categories = nil
		}
	}
	spec.Tasks = taskSpecs(rd.tasks)
	if err := d.evaluationSplits(rd, train, o); err != nil {
		return nil, err
	}
	if rd.csv != nil && rd.csv.missing == MissingImpute {
		spec.Medians, spec.Indicators = d.imputation(rd.csv)
	}
	norm, err := desc.normalization(d.Train)
	if err != nil {
		return nil, err
	}
	spec.Input = norm
	if err := d.labelNotes(); err != nil {
		return nil, err
	}
	if !o.RawTargets {
		if err := d.scaleTargets(&spec); err != nil {
			return nil, err
		}
	}
	spec.Train = d.Train.Len()
	if d.Valid != nil {
		spec.Valid = d.Valid.Len()
	}
	if spec.SHA256, err = hashFiles(filepath.Join(dir, TasksFile), train.path, pathOf(d.Valid), pathOf(d.Test)); err != nil {
		return nil, err
	}
	tasks := spec.DataTasks()
	for _, s := range []*Set{d.Train, d.Valid, d.Test} {
		if s != nil {
			s.norm, s.tasks = norm, tasks
		}
	}
	d.Spec = spec
	return d, nil
}

// scaleTargets records in spec the standardisation of each regression
// task's targets on the training split, and says so.
func (d *Data) scaleTargets(spec *Spec) error {
	var err error
	if spec.Targets, err = d.Train.targetScales(); err != nil {
		return err
	}
	for name, sc := range spec.Targets {
		what := "regression targets"
		if slices.ContainsFunc(spec.Tasks, func(t TaskSpec) bool { return t.Name == name && t.Positive }) {
			what = "positive: the logarithms of its targets,"
		}
		d.Notes = append(d.Notes, fmt.Sprintf("task %s: %s standardised with the training split's mean %.6g and standard deviation %.6g; scores and predictions are in the data's units", name, what, sc.Mean, sc.Std))
	}
	return nil
}

// evaluationSplits sets d's splits: train, the validation and test
// splits of rd's directory, or, where it has no validation split and
// o.Valid asks for one, training examples held out (o.Seed draws them);
// without a test split the validation split stands for it.
func (d *Data) evaluationSplits(rd *reading, train *Set, o Options) error {
	d.Train = train
	var err error
	if d.Valid, err = rd.split("valid"); err != nil {
		return err
	}
	if d.Test, err = rd.split("test"); err != nil {
		return err
	}
	switch {
	case d.Valid == nil && o.Valid != 0:
		if d.Train, d.Valid, err = holdOut(train, o.Valid, o.Seed); err != nil {
			return err
		}
	case d.Valid != nil && o.Valid > 0:
		return &data.SettingError{Setting: "valid", Value: o.Valid,
			Reason: fmt.Sprintf("%s has a validation split (%s); -valid holds out training examples only where there is none", rd.dir, d.Valid.path)}
	}
	if d.Test == nil {
		if d.Valid == nil {
			return fmt.Errorf("%w: %s has neither a validation nor a test split (%s, %s), and no training examples are held out (-valid 0): nothing to evaluate on",
				data.ErrInvalid, rd.dir, ValidFile, TestFile)
		}
		d.Test = d.Valid
	}
	return nil
}

func pathOf(s *Set) string {
	if s == nil {
		return ""
	}
	return s.path
}
