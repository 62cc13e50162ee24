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
// label masks its task on that row (csv.go). Lines are bounded by the
// header's columns.
//
// Without a validation split, Options.Valid training examples, drawn at random
// with the seed, are held out for validation; without a test split, the
// validation split is the test split too.
//
// Everything is checked while loading, and an inconsistency (a shape or
// type, a label out of range, a non-finite input or regression target,
// splits that disagree, tasks.json) is an error wrapping data.ErrInvalid
// that names the file, the array and the index. The arrays are read
// through package data/npz, whose reads are bounded by the archive's
// size.
package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/npz"
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

// Input normalisations (tasks.json's "input").
const (
	Standardize = "standardize"
	Unit        = "unit"
	None        = "none"
)

// TaskSpec is one task as tasks.json describes it.
type TaskSpec struct {
	Name       string   `json:"name"`
	Kind       string   `json:"kind"` // classification or regression
	Classes    int      `json:"classes,omitempty"`
	ClassNames []string `json:"class_names,omitempty"`
}

// Description is tasks.json.
type Description struct {
	Tasks []TaskSpec `json:"tasks"`
	Input string     `json:"input,omitempty"`
	// ID names the CSV column that identifies each row: carried with
	// it, not an input. "" takes a column named "id" where there is one.
	ID string `json:"id,omitempty"`
	// Ignore lists CSV columns that are neither inputs nor targets.
	Ignore []string `json:"ignore,omitempty"`
	// Categorical lists CSV input columns one-hot encoded even where
	// their values are numbers (a column of text is, without being
	// listed).
	Categorical []string `json:"categorical,omitempty"`
}

// Scale is how a regression task's targets are standardised: the
// network learns (y − Mean)/Std, the mean and standard deviation of the
// training split's targets.
type Scale struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// Normalization is the transform of the inputs: x' = (x − Mean[g]) /
// Std[g] for standardize, g an image's channel or a vector's feature;
// x/255 for unit; x for none.
type Normalization struct {
	Kind string    `json:"kind"`
	Mean []float64 `json:"mean,omitempty"`
	Std  []float64 `json:"std,omitempty"`
}

// Spec is what a run records of its file data set: where it is, and
// what the training split decided, so that a resumed run, an evaluation
// or a prediction reads inputs as training did.
type Spec struct {
	Dir   string         `json:"dir"`
	Shape []int          `json:"input_shape,omitempty"`
	Tasks []TaskSpec     `json:"tasks,omitempty"`
	Input *Normalization `json:"input,omitempty"`
	// Train is the number of training examples (after the hold-out),
	// Valid that of validation examples (0: no validation split).
	Train int `json:"train_examples,omitempty"`
	Valid int `json:"valid_examples,omitempty"`
	// Columns are the input columns' names where the training split is
	// a CSV file: predict finds them by name.
	Columns []string `json:"columns,omitempty"`
	// Categories are the categories of each one-hot encoded input
	// column, in the order of its features.
	Categories map[string][]string `json:"categories,omitempty"`
	// ID is the CSV column carried as each row's identifier; Ignore the
	// columns skipped (tasks.json's).
	ID     string   `json:"id,omitempty"`
	Ignore []string `json:"ignore,omitempty"`
	// Sep is the CSV separator asked for ("": found from each file's
	// header); Missing what a missing CSV input does (MissingError, "",
	// or MissingDrop).
	Sep     string `json:"sep,omitempty"`
	Missing string `json:"missing,omitempty"`
	// Targets is each regression task's target standardisation, by
	// task name; nil where the targets are used as they are, as they
	// were before it was recorded.
	Targets map[string]Scale `json:"target_scale,omitempty"`
	// RawTargets is Options.RawTargets: regression targets used as
	// they are.
	RawTargets bool `json:"raw_targets,omitempty"`
	// Version is SpecVersion for a spec recorded with the fields above
	// (Categories to RawTargets); 0 for one recorded before, whose data
	// load as they did then (Options.Legacy).
	Version int `json:"version,omitempty"`
	// SHA256 is the SHA-256, in hex, of each file the data were read
	// from (tasks.json and the splits' files), by file name: a changed
	// label or pixel leaves the spec as it was, the hash does not. Nil
	// in checkpoints written before it was recorded.
	SHA256 map[string]string `json:"sha256,omitempty"`
}

// DataTasks are the spec's tasks as data.Tasks.
func (s *Spec) DataTasks() []data.Task {
	tasks := make([]data.Task, len(s.Tasks))
	for j, t := range s.Tasks {
		tasks[j] = data.Task{Name: t.Name, Kind: data.Classification, Classes: t.Classes, ClassNames: t.ClassNames}
		if t.Kind == "regression" {
			tasks[j].Kind, tasks[j].Classes = data.Regression, 0
			if sc, ok := s.Targets[t.Name]; ok {
				tasks[j].Shift, tasks[j].Scale = sc.Mean, sc.Std
			}
		}
	}
	return tasks
}

// SpecVersion is the version of the specs Load writes.
const SpecVersion = 1

// Options are the loading options a run's spec asks for: those of a new
// run, or those a restored run loaded its data with. valid and seed
// are the run's -valid and -seed. A spec recorded before Version loads
// its data as then: Options.Legacy.
func (s *Spec) Options(valid int, seed uint64) Options {
	legacy := s.Input != nil && s.Version == 0
	return Options{Valid: valid, Seed: seed, Sep: s.Sep, Missing: s.Missing, ID: s.ID,
		RawTargets: s.RawTargets || legacy, Legacy: legacy}
}

// ErrChanged is wrapped by Agrees' error: the data are not those a run
// recorded.
var ErrChanged = errors.New("the data have changed since the run started")

// changed is Agrees' error: one line naming the file or the field that
// differs.
type changed string

func (c changed) Error() string        { return string(c) }
func (c changed) Is(target error) bool { return target == ErrChanged }

// Agrees reports how s, loaded now, differs from rec, recorded by a
// run: nil when they agree, else an error wrapping ErrChanged that names
// the first file whose content hash differs (where rec records hashes)
// or the first field of the spec that differs, in one short line. The
// normalisation's statistics must agree to the bit. The directories may
// differ: data that moved are the same data.
func (s *Spec) Agrees(rec *Spec) error {
	if rec.SHA256 != nil {
		if msg := s.hashDiffers(rec.SHA256); msg != "" {
			return changed(msg)
		}
	}
	if msg := s.fieldDiffers(rec); msg != "" {
		return changed(fmt.Sprintf("%s has changed since the run started: %s", s.Dir, msg))
	}
	return nil
}

// hashDiffers says which file of s differs from the hashes rec, or "".
func (s *Spec) hashDiffers(rec map[string]string) string {
	names := []string{TasksFile}
	for _, base := range []string{"train", "valid", "test"} {
		names = append(names, base+".npz", base+".csv")
	}
	for name := range rec {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for name := range s.SHA256 {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	// A file the run read and that is gone or changed first: a split
	// stored as .csv instead of .npz is named by the file the run read.
	for _, name := range names {
		was, wok := rec[name]
		now, nok := s.SHA256[name]
		path := filepath.Join(s.Dir, name)
		switch {
		case wok && !nok:
			return fmt.Sprintf("%s, which the run read, is no longer there", path)
		case wok && was != now:
			return fmt.Sprintf("%s has changed since the run started (SHA-256 %s now, the run recorded %s)", path, abbrev(now), abbrev(was))
		}
	}
	for _, name := range names {
		if _, wok := rec[name]; !wok && s.SHA256[name] != "" {
			return fmt.Sprintf("%s was added since the run started (the run did not read it)", filepath.Join(s.Dir, name))
		}
	}
	return ""
}

// abbrev shortens a hex hash for a message.
func abbrev(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// fieldDiffers names the first field of the spec in which s and rec
// differ, with both values (the first differing element of a list), or
// returns "".
func (s *Spec) fieldDiffers(rec *Spec) string {
	if !slices.Equal(s.Shape, rec.Shape) {
		return fmt.Sprintf("input_shape is %s now, the run recorded %s", shapeString(s.Shape), shapeString(rec.Shape))
	}
	if len(s.Tasks) != len(rec.Tasks) {
		return fmt.Sprintf("%s names %d tasks now, the run recorded %d", TasksFile, len(s.Tasks), len(rec.Tasks))
	}
	for j, t := range s.Tasks {
		r := rec.Tasks[j]
		switch {
		case t.Name != r.Name:
			return fmt.Sprintf("tasks[%d].name is %s now, the run recorded %s", j, short(t.Name), short(r.Name))
		case t.Kind != r.Kind:
			return fmt.Sprintf("task %s's kind is %s now, the run recorded %s", short(t.Name), short(t.Kind), short(r.Kind))
		case t.Classes != r.Classes:
			return fmt.Sprintf("task %s's classes is %d now, the run recorded %d", short(t.Name), t.Classes, r.Classes)
		}
		if msg := listDiffers("task "+short(t.Name)+"'s class_names", t.ClassNames, r.ClassNames, short); msg != "" {
			return msg
		}
	}
	switch a, b := s.Input, rec.Input; {
	case a == nil && b != nil:
		return "there is no input normalisation now, the run recorded one"
	case a != nil && b == nil:
		return "there is an input normalisation now, the run recorded none"
	case a == nil:
	case a.Kind != b.Kind:
		return fmt.Sprintf("input is %s now, the run recorded %s", short(a.Kind), short(b.Kind))
	default:
		g := func(v float64) string { return fmt.Sprint(v) }
		if msg := listDiffers("input mean", a.Mean, b.Mean, g); msg != "" {
			return msg
		}
		if msg := listDiffers("input std", a.Std, b.Std, g); msg != "" {
			return msg
		}
	}
	if msg := listDiffers("columns", s.Columns, rec.Columns, short); msg != "" {
		return msg
	}
	for _, c := range s.Columns {
		if msg := listDiffers("column "+short(c)+"'s categories", s.Categories[c], rec.Categories[c], short); msg != "" {
			return msg
		}
	}
	if s.ID != rec.ID {
		return fmt.Sprintf("the id column is %s now, the run recorded %s", short(s.ID), short(rec.ID))
	}
	for _, t := range s.Tasks {
		a, aok := s.Targets[t.Name]
		b, bok := rec.Targets[t.Name]
		if aok != bok || a != b {
			return fmt.Sprintf("task %s's target scale is %+v now, the run recorded %+v", short(t.Name), a, b)
		}
	}
	switch {
	case s.Train != rec.Train:
		return fmt.Sprintf("train_examples is %d now, the run recorded %d", s.Train, rec.Train)
	case s.Valid != rec.Valid:
		return fmt.Sprintf("valid_examples is %d now, the run recorded %d", s.Valid, rec.Valid)
	}
	return ""
}

// listDiffers names the first element in which the lists now and was
// differ, or their lengths, or returns "".
func listDiffers[T comparable](field string, now, was []T, str func(T) string) string {
	if len(now) != len(was) {
		return fmt.Sprintf("%s has %d elements now, the run recorded %d", field, len(now), len(was))
	}
	for i := range now {
		if now[i] != was[i] {
			return fmt.Sprintf("%s[%d] is %s now, the run recorded %s", field, i, str(now[i]), str(was[i]))
		}
	}
	return ""
}

// short quotes s for a message, cut to 40 characters: a name from a
// file may be of any length.
func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return strconv.Quote(string(r[:40])) + "…"
	}
	return strconv.Quote(s)
}

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
	// MissingError ("") refuses it, naming the file, line and column;
	// MissingDrop drops the row. A missing target never drops its row:
	// it masks that task's loss there.
	Missing string
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
	switch o.Missing {
	case "", MissingError, MissingDrop:
	default:
		return nil, fmt.Errorf("%w: -missing %q is not %s or %s", data.ErrInvalid, o.Missing, MissingError, MissingDrop)
	}
	id := o.ID
	if id == "" {
		id = desc.ID
	}
	if o.Legacy {
		o.RawTargets = true
	}
	spec := Spec{Dir: dir, Tasks: desc.Tasks, Sep: o.Sep, Missing: o.Missing, Ignore: desc.Ignore, RawTargets: o.RawTargets && !o.Legacy, Version: SpecVersion}
	if o.Legacy {
		spec.Version = 0
	}
	d := &Data{}
	rd := &reading{dir: dir, sep: sep, desc: desc, id: id, tasks: spec.DataTasks(), missing: o.Missing, legacy: o.Legacy, notes: &d.Notes}
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
	norm, err := desc.normalization(d.Train)
	if err != nil {
		return nil, err
	}
	spec.Input = norm
	if err := d.labelNotes(); err != nil {
		return nil, err
	}
	if !o.RawTargets {
		if spec.Targets, err = d.Train.targetScales(); err != nil {
			return nil, err
		}
		for name, sc := range spec.Targets {
			d.Notes = append(d.Notes, fmt.Sprintf("task %s: regression targets standardised with the training split's mean %.6g and standard deviation %.6g; scores and predictions are in the data's units", name, sc.Mean, sc.Std))
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

// hashFiles returns the SHA-256 of each file of paths by its base name,
// the first of a name only; empty paths are skipped.
func hashFiles(paths ...string) (map[string]string, error) {
	sums := map[string]string{}
	for _, path := range paths {
		if name := filepath.Base(path); path != "" && sums[name] == "" {
			sum, err := hashFile(path)
			if err != nil {
				return nil, err
			}
			sums[name] = sum
		}
	}
	return sums, nil
}

// taskSpecs are tasks as a spec records them.
func taskSpecs(tasks []data.Task) []TaskSpec {
	specs := make([]TaskSpec, len(tasks))
	for j, t := range tasks {
		specs[j] = TaskSpec{Name: t.Name, Kind: t.Kind.String(), Classes: t.Classes, ClassNames: t.ClassNames}
	}
	return specs
}

// reading is how a data directory's splits are read: what tasks.json
// and the options say, and what the training split decided.
type reading struct {
	dir     string
	sep     rune
	desc    Description
	id      string // asked for; "" takes a column named "id"
	tasks   []data.Task
	missing string
	shape   []int   // the training split's inputs; nil before it
	csv     *schema // the training split's, where it is a CSV file
	legacy  bool    // Options.Legacy
	notes   *[]string
}

func (rd *reading) note(format string, args ...any) {
	*rd.notes = append(*rd.notes, fmt.Sprintf(format, args...))
}

// split reads the split base of the directory, from base.npz or
// base.csv; nil where there is neither.
func (rd *reading) split(base string) (*Set, error) {
	npzPath, csvPath := filepath.Join(rd.dir, base+".npz"), filepath.Join(rd.dir, base+".csv")
	_, errNPZ := os.Stat(npzPath)
	_, errCSV := os.Stat(csvPath)
	switch {
	case errNPZ == nil && errCSV == nil:
		return nil, fmt.Errorf("%w: %s has both %s.npz and %s.csv: keep one", data.ErrInvalid, rd.dir, base, base)
	case errNPZ == nil:
		return rd.npz(npzPath, base)
	case errCSV == nil:
		return rd.csvSplit(csvPath, base)
	case !errors.Is(errNPZ, fs.ErrNotExist):
		return nil, errNPZ
	case !errors.Is(errCSV, fs.ErrNotExist):
		return nil, errCSV
	}
	return nil, nil
}

// npz reads a split's archive; the training split's decides the classes
// tasks.json leaves out.
func (rd *reading) npz(path, base string) (*Set, error) {
	s, err := readSplit(path, base, rd.tasks, rd.shape, true)
	if err != nil {
		return nil, err
	}
	if rd.shape == nil {
		for j, t := range rd.tasks {
			if t.Kind == data.Classification && t.Classes == 0 {
				largest := -1.0
				for r := j; r < len(s.y); r += len(rd.tasks) {
					if v := float64(s.y[r]); !math.IsNaN(v) {
						largest = max(largest, v)
					}
				}
				if rd.tasks[j].Classes, err = inferClasses(path, "y", t, largest, false); err != nil {
					return nil, err
				}
				rd.note("task %s: %d classes, from the largest label of %s", t.Name, rd.tasks[j].Classes, filepath.Base(path))
			}
		}
		rd.shape = s.shape
	}
	return s, nil
}

// csvSplit reads a split's CSV file. The training split's is read twice:
// once to decide how (schema), once to read it.
func (rd *reading) csvSplit(path, base string) (*Set, error) {
	if rd.shape == nil {
		sc, lay, names, _, err := scanTrain(path, rd.sep, rd.desc, rd.tasks, rd.id, rd.legacy)
		if err != nil {
			return nil, err
		}
		sc.missing = rd.missing
		s, dropped, err := readCSV(path, base, rd.sep, sc, lay)
		if err != nil {
			return nil, err
		}
		rd.csv, rd.tasks, rd.shape = sc, sc.tasks, s.shape
		rd.csvNotes(path, sc, lay, names, dropped)
		return s, nil
	}
	sc := rd.csv
	if sc == nil {
		// A CSV split beside a training archive: numeric columns, as
		// many as the archive's features.
		sc = &schema{tasks: rd.tasks, ignore: rd.desc.Ignore, missing: rd.missing, id: rd.id}
		f, _, header, err := openCSV(path, rd.sep, true)
		if err != nil {
			return nil, err
		}
		f.Close()
		_, inputs, _, err := trainLayout(path, header, rd.tasks, "", rd.desc.Ignore, rd.legacy)
		if err != nil {
			return nil, err
		}
		sc.columns = inputs
		sc.index()
		if len(rd.shape) != 1 || sc.width != rd.shape[0] {
			return nil, fmt.Errorf("%w: %s: inputs of shape %v, the training split's are %v", data.ErrInvalid, path, []int{sc.width}, rd.shape)
		}
	}
	s, dropped, err := readCSV(path, base, rd.sep, sc, nil)
	if err != nil {
		return nil, err
	}
	if dropped > 0 {
		rd.note("%s: dropped %d rows with a missing input (-missing drop)", filepath.Base(path), dropped)
	}
	return s, nil
}

// csvNotes says what reading the training CSV decided.
func (rd *reading) csvNotes(path string, sc *schema, lay *layout, names []string, dropped int) {
	base := filepath.Base(path)
	if lay.indexed {
		rd.note("%s: the first column has no name (%q): taken as the row index, not an input", base, names[0])
	}
	if sc.id != "" {
		rd.note("%s: column %q identifies the rows (the id), not an input", base, sc.id)
	}
	var cols []string
	for _, c := range sc.columns {
		if cs, ok := sc.cats[c]; ok {
			c = fmt.Sprintf("%s (categorical, %d categories: %s)", c, len(cs), listShort(cs))
		}
		cols = append(cols, c)
	}
	rd.note("%s: %d input columns, %d features: %s", base, len(sc.columns), sc.width, strings.Join(cols, ", "))
	for j, t := range sc.tasks {
		if rd.desc.Tasks[j].ClassNames == nil && t.ClassNames != nil {
			rd.note("task %s: %d classes from the training split's labels, in sorted order: %s", t.Name, t.Classes, listShort(t.ClassNames))
		} else if t.Kind == data.Classification && rd.desc.Tasks[j].Classes == 0 && t.ClassNames == nil {
			rd.note("task %s: %d classes, from the largest label of %s", t.Name, t.Classes, base)
		}
	}
	if dropped > 0 {
		rd.note("%s: dropped %d rows with a missing input (-missing drop)", base, dropped)
	}
}

// labelNotes counts each task's missing labels in the training split,
// and refuses a task without one there.
func (d *Data) labelNotes() error {
	k := len(d.Train.tasks)
	for j, t := range d.Train.tasks {
		missing := 0
		for i := range d.Train.Len() {
			if math.IsNaN(float64(d.Train.y[d.Train.rows(i)*k+j])) {
				missing++
			}
		}
		switch {
		case missing == d.Train.Len():
			return fmt.Errorf("%w: %s: task %s has no label in the training split: every one is missing", data.ErrInvalid, d.Train.path, t.Name)
		case missing > 0:
			d.Notes = append(d.Notes, fmt.Sprintf("task %s: %d of the %d training labels are missing: those rows train the other tasks, and scores skip them", t.Name, missing, d.Train.Len()))
		}
	}
	return nil
}

// targetScales are the mean and standard deviation of each regression
// task's targets on the split (a constant target's deviation is 1).
func (s *Set) targetScales() (map[string]Scale, error) {
	var out map[string]Scale
	k := len(s.tasks)
	for j, t := range s.tasks {
		if t.Kind != data.Regression {
			continue
		}
		var sum, n float64
		for i := range s.Len() {
			if v := float64(s.y[s.rows(i)*k+j]); !math.IsNaN(v) {
				sum += v
				n++
			}
		}
		mean := sum / n
		var sq float64
		for i := range s.Len() {
			if v := float64(s.y[s.rows(i)*k+j]); !math.IsNaN(v) {
				sq += (v - mean) * (v - mean)
			}
		}
		std := math.Sqrt(sq / n)
		if !(std > 0) {
			std = 1
		}
		if math.IsInf(mean, 0) || math.IsInf(std, 0) {
			return nil, fmt.Errorf("%w: %s: task %s's targets overflow float64 statistics", data.ErrInvalid, s.path, t.Name)
		}
		if out == nil {
			out = map[string]Scale{}
		}
		out[t.Name] = Scale{Mean: mean, Std: std}
	}
	return out, nil
}

func pathOf(s *Set) string {
	if s == nil {
		return ""
	}
	return s.path
}

// hashFile is the SHA-256 of the file at path, in hex. It reads the file
// once more after loading: the readers seek about archives, and a hash
// of a few hundred megabytes takes a second or so, once per run.
func hashFile(path string) (string, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// maxDescription bounds tasks.json: a few tasks take a few hundred
// bytes.
const maxDescription = 1 << 20

// ReadDescription reads and checks tasks.json.
func ReadDescription(path string) (Description, error) {
	var desc Description
	f, _, err := regfile.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return desc, fmt.Errorf("%w: %s: the data directory needs %s naming the tasks (go doc ./data/files)", data.ErrMissing, path, TasksFile)
		}
		return desc, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDescription+1))
	if err != nil {
		return desc, err
	}
	if len(b) > maxDescription {
		return desc, fmt.Errorf("%w: %s: more than %d bytes; it names the tasks only", data.ErrInvalid, path, maxDescription)
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(b, bom)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&desc); err != nil {
		return desc, fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return desc, fmt.Errorf("%w: %s: more after the JSON object (offset %d)", data.ErrInvalid, path, dec.InputOffset())
	}
	if err := desc.check(); err != nil {
		return desc, fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
	}
	return desc, nil
}

// check checks a description as decoded and fills in what it leaves to
// defaults: a classification task's classes from its class names, the
// input normalisation.
func (desc *Description) check() error {
	if len(desc.Tasks) == 0 {
		return errors.New("no tasks")
	}
	for j := range desc.Tasks {
		// classes left out: class_names give them, or the training
		// split's labels do.
		if t := &desc.Tasks[j]; t.Kind == "classification" && t.Classes == 0 && t.ClassNames != nil {
			t.Classes = len(t.ClassNames)
		}
	}
	tasks := map[string]bool{}
	for j, t := range desc.Tasks {
		if err := CheckTaskName(t.Name); err != nil {
			return fmt.Errorf("task %d: %w", j, err)
		}
		if tasks[t.Name] {
			return fmt.Errorf("task %d: name %q used twice", j, t.Name)
		}
		if err := t.check(); err != nil {
			return fmt.Errorf("task %s: %w", t.Name, err)
		}
		tasks[t.Name] = true
	}
	if err := desc.checkColumns(tasks); err != nil {
		return err
	}
	switch desc.Input {
	case "":
		desc.Input = Standardize
	case Standardize, Unit, None:
	default:
		return fmt.Errorf("input %q is not %s, %s or %s", desc.Input, Standardize, Unit, None)
	}
	return nil
}

// check checks a task's kind and classes.
func (t TaskSpec) check() error {
	switch {
	case t.Kind == "classification" && (t.Classes < 0 || t.Classes == 1):
		return fmt.Errorf("a classification task needs \"classes\" of at least 2 (or none, to count them from the labels), got %d", t.Classes)
	case t.Kind == "regression" && (t.Classes != 0 || t.ClassNames != nil):
		return errors.New("a regression task has no classes")
	case t.Kind != "classification" && t.Kind != "regression":
		return fmt.Errorf("kind %q is not classification or regression", t.Kind)
	case t.ClassNames != nil && len(t.ClassNames) != t.Classes:
		return fmt.Errorf("%d class names for %d classes", len(t.ClassNames), t.Classes)
	}
	names := map[string]bool{}
	for _, n := range t.ClassNames {
		if names[n] {
			return fmt.Errorf("class name %q twice", n)
		}
		names[n] = true
	}
	return nil
}

// checkColumns checks the columns the description names besides the
// tasks': each named once, none a task.
func (desc *Description) checkColumns(tasks map[string]bool) error {
	cols := map[string]string{}
	for _, list := range []struct {
		field string
		names []string
	}{{"id", []string{desc.ID}}, {"ignore", desc.Ignore}, {"categorical", desc.Categorical}} {
		for _, name := range list.names {
			switch {
			case name == "" && list.field == "id":
			case name == "" || strings.TrimSpace(name) != name:
				return fmt.Errorf("%s: column name %q is empty or has surrounding spaces", list.field, name)
			case tasks[name]:
				return fmt.Errorf("%s: %q is a task", list.field, name)
			case cols[name] != "":
				return fmt.Errorf("column %q is in both %s and %s", name, cols[name], list.field)
			default:
				cols[name] = list.field
			}
		}
	}
	return nil
}

// CheckTaskName refuses a task name that would not stay one name in
// predict's outputs: a CSV column header TASK/label, an array name in an
// .npz. A name is non-empty UTF-8 of printable characters (a space, but
// no control character, line or paragraph separator, or other space),
// without commas, slashes, backslashes or quotes, and without
// surrounding spaces.
func CheckTaskName(name string) error {
	if name == "" || !utf8.ValidString(name) || strings.ContainsAny(name, ",/\\\"") || strings.TrimSpace(name) != name ||
		strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return fmt.Errorf("name %q (names are non-empty printable UTF-8, without commas, slashes, quotes, control characters or surrounding spaces)", name)
	}
	return nil
}

// normalization computes the input transform on the training split.
func (desc Description) normalization(train *Set) (*Normalization, error) {
	n := &Normalization{Kind: desc.Input}
	if n.Kind != Standardize {
		return n, nil
	}
	groups := train.size / train.per
	sum, sq := make([]float64, groups), make([]float64, groups)
	cnt := float64(train.Len()) * float64(train.per)
	// Two passes (mean, then squared deviations) for accuracy.
	for pass := range 2 {
		for i := range train.Len() {
			base := train.rows(i) * train.size
			for p := range train.size {
				g := p / train.per
				v := train.raw(base + p)
				if pass == 0 {
					sum[g] += v
				} else {
					d := v - n.Mean[g]
					sq[g] += d * d
				}
			}
		}
		if pass == 0 {
			n.Mean = make([]float64, groups)
			for g := range sum {
				n.Mean[g] = sum[g] / cnt
			}
		}
	}
	n.Std = make([]float64, groups)
	for g := range sq {
		n.Std[g] = math.Sqrt(sq[g] / cnt)
		if !(n.Std[g] > 0) {
			n.Std[g] = 1 // a constant channel: centred, not scaled
		}
		if math.IsInf(n.Mean[g], 0) || math.IsInf(n.Std[g], 0) {
			return nil, fmt.Errorf("%w: %s: the inputs' %s %d overflow float64 statistics", data.ErrInvalid, train.path, train.groupName(), g)
		}
	}
	return n, nil
}

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

func (s *Set) Name() string       { return s.name }
func (s *Set) Tasks() []data.Task { return s.tasks }
func (s *Set) InputShape() []int  { return s.shape }
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

// Placeholder is a data set that stands for a run's training split when
// only its checkpoint is at hand (prediction): its shape, tasks and
// size, without examples.
func Placeholder(spec *Spec) data.Dataset { return placeholder{spec} }

type placeholder struct{ spec *Spec }

func (p placeholder) Name() string       { return Name + "/train" }
func (p placeholder) Tasks() []data.Task { return p.spec.DataTasks() }
func (p placeholder) InputShape() []int  { return p.spec.Shape }
func (p placeholder) Len() int           { return p.spec.Train }
func (p placeholder) Example(i int, _, _ []float32) error {
	return fmt.Errorf("example %d: the training split of %s is not loaded", i, p.spec.Dir)
}

// WriteSplit writes the archive of one split to path: x, of shape
// (N, ...) and type []uint8, []float32 or []float64, and, unless y is
// nil, y as N×K float64 targets (K = len(y)/N). It is how a data
// directory can be written from Go (see docs/own-data.md).
func WriteSplit(path string, x any, shape []int, y []float64) error {
	var descr string
	switch x.(type) {
	case []uint8:
		descr = "|u1"
	case []float32:
		descr = "<f4"
	case []float64:
		descr = "<f8"
	default:
		return fmt.Errorf("files: inputs of type %T, want []uint8, []float32 or []float64", x)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := npz.NewWriter(f)
	out, err := w.Create("x", descr, shape)
	if err == nil {
		err = binary.Write(out, binary.LittleEndian, x)
	}
	if err == nil && y != nil {
		n := shape[0]
		if n == 0 || len(y)%n != 0 {
			err = fmt.Errorf("files: %d targets for %d examples", len(y), n)
		} else {
			err = w.WriteFloat64("y", []int{n, len(y) / n}, y)
		}
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteDescription writes desc as dir/tasks.json.
func WriteDescription(dir string, desc Description) error {
	b, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, TasksFile), append(b, '\n'), 0o644)
}
