package files

import (
	"fmt"

	"github.com/mtsgd/mtsgd/data"
)

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
	// NAValues are the cells read as missing besides "", "NA" and "NaN"
	// (Options.NAValues).
	NAValues []string `json:"na_values,omitempty"`
	// Medians are each numeric input column's training median, which
	// fills its missing cells, and Indicators the columns with a
	// missing-value feature after their own, under MissingImpute.
	Medians    map[string]float64 `json:"medians,omitempty"`
	Indicators []string           `json:"missing_indicators,omitempty"`
	// Targets is each regression task's target standardisation, by
	// task name; nil where the targets are used as they are, as they
	// were before it was recorded.
	Targets map[string]Scale `json:"target_scale,omitempty"`
	// RawTargets is Options.RawTargets: regression targets used as
	// they are.
	RawTargets bool `json:"raw_targets,omitempty"`
	// Version is SpecVersion for a spec recorded with the fields above;
	// 1 for one recorded before NAValues, which reads pandas.read_csv's
	// missing tokens (Options.LegacyNA); 0 for one recorded before
	// Categories to RawTargets, whose data load as they did then
	// (Options.Legacy).
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
			tasks[j].Kind, tasks[j].Classes, tasks[j].Log = data.Regression, 0, t.Positive
			if sc, ok := s.Targets[t.Name]; ok {
				tasks[j].Shift, tasks[j].Scale = sc.Mean, sc.Std
			}
		}
	}
	return tasks
}

// CheckTasks checks the spec's tasks as ReadDescription checks
// tasks.json's: names, kinds, classes and class names. A checkpoint's
// spec is all predict knows of a run's tasks, and its names reach
// pred.csv.
func (s *Spec) CheckTasks() error {
	seen := map[string]bool{}
	for j, t := range s.Tasks {
		if err := CheckTaskName(t.Name); err != nil {
			return fmt.Errorf("files: task %d: %w", j, err)
		}
		if seen[t.Name] {
			return fmt.Errorf("files: task %d: name %q used twice", j, t.Name)
		}
		seen[t.Name] = true
		if err := t.check(); err != nil {
			return fmt.Errorf("files: task %s: %w", t.Name, err)
		}
	}
	return nil
}

// SpecVersion is the version of the specs Load writes.
const SpecVersion = 2

// Options are the loading options a run's spec asks for: those of a new
// run, or those a restored run loaded its data with. valid and seed
// are the run's -valid and -seed. A spec recorded before Version loads
// its data as then: Options.Legacy.
func (s *Spec) Options(valid int, seed uint64) Options {
	legacy := s.Input != nil && s.Version == 0
	return Options{Valid: valid, Seed: seed, Sep: s.Sep, Missing: s.Missing, NAValues: s.NAValues, ID: s.ID,
		RawTargets: s.RawTargets || legacy, Legacy: legacy, LegacyNA: s.Input != nil && s.Version < 2}
}

// taskSpecs are tasks as a spec records them.
func taskSpecs(tasks []data.Task) []TaskSpec {
	specs := make([]TaskSpec, len(tasks))
	for j, t := range tasks {
		specs[j] = TaskSpec{Name: t.Name, Kind: t.Kind.String(), Classes: t.Classes, ClassNames: t.ClassNames, Positive: t.Log}
	}
	return specs
}
