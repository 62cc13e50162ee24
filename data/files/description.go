package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/regfile"
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
	// Positive, for a regression task, says its targets are above 0:
	// trained on their logarithm, predicted in their units (data.Task.Log).
	Positive bool `json:"positive,omitempty"`
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
	if err := checkKeys(bytes.TrimPrefix(b, bom)); err != nil {
		return desc, fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
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
	case t.Kind != "regression" && t.Positive:
		return errors.New("\"positive\" is for a regression task")
	case t.Kind != "classification" && t.Kind != "regression":
		return fmt.Errorf("kind %q is not classification or regression", t.Kind)
	case t.ClassNames != nil && len(t.ClassNames) != t.Classes:
		return fmt.Errorf("%d class names for %d classes", len(t.ClassNames), t.Classes)
	}
	names := map[string]bool{}
	for _, n := range t.ClassNames {
		if err := CheckClassName(n); err != nil {
			return err
		}
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
	if !printable(name) || strings.ContainsAny(name, ",/\\\"") {
		return fmt.Errorf("name %q (names are non-empty printable UTF-8, without commas, slashes, quotes, control characters or surrounding spaces)", name)
	}
	return nil
}

// CheckClassName refuses a class name that would not stay one value in
// predict's outputs (pred.csv's TASK/label column, -show's captions) or
// would act on a terminal that shows them: the rule of task names but
// for commas, slashes and quotes, which a quoted CSV field holds.
func CheckClassName(name string) error {
	if !printable(name) {
		return fmt.Errorf("class name %q (class names are non-empty printable UTF-8, without control characters, line or paragraph separators, or surrounding spaces)", name)
	}
	return nil
}

// printable reports whether name is non-empty UTF-8 of printable
// characters (a space, but no control character, line or paragraph
// separator, or other space), without surrounding spaces.
func printable(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.TrimSpace(name) == name &&
		!strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) })
}
