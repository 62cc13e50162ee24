package files

import (
	"math"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/data"
)

// A split may be a CSV file instead of an archive, for tabular data:
// base.csv, a header naming the columns, then one example per line. The
// columns named as tasks in tasks.json are the targets; an id column
// (Description.ID, Options.ID, or one named "id") is carried with each
// row; an unnamed first column (the index that pandas' to_csv and R's
// write.csv write) and the columns tasks.json ignores are skipped; every
// other column is an input, in the order of the training file's columns,
// which the other splits and predict find by name. An input column is
// numeric (booleans read as 1 and 0) or, where its values are text (or
// tasks.json lists it as categorical), one-hot encoded over the
// categories of the training split.

// schema is what the training split decided about the columns: how the
// other splits and predict read theirs.
type schema struct {
	columns []string            // input columns, in order
	cats    map[string][]string // categorical input columns' categories
	width   int                 // features: a numeric column's 1, a categorical one's categories
	tasks   []data.Task
	// names maps a classification task's class names to indices (nil
	// for a task without names).
	names   []map[string]int
	id      string // the id column; "" none
	ignore  []string
	missing string
	na      naSet // the cells read as missing
	// indicators are the numeric input columns that have a missing-value
	// indicator feature after their own, medians each numeric input
	// column's training median (nil until fitted), under MissingImpute.
	indicators map[string]bool
	medians    map[string]float64
	// unseen are, per task whose classes the largest number label
	// decided, the classes below it no training label is: labels 4, 6
	// and 8 give 9 classes, 6 of them never seen (names, not numbers of
	// classes, perhaps, which "class_names" makes them).
	unseen map[int]unseenClasses
}

// unseenClasses are a task's classes without a training example, and the
// labels it has.
type unseenClasses struct {
	classes, labels []string
}

// newSchema is the schema of a spec: that recorded by a run, or
// decided by its training split.
func newSchema(spec *Spec) *schema {
	sc := &schema{columns: spec.Columns, cats: spec.Categories, tasks: spec.DataTasks(), id: spec.ID, ignore: spec.Ignore, missing: spec.Missing,
		na: newNASet(spec.Version < 2, spec.NAValues), medians: spec.Medians, indicators: map[string]bool{}}
	for _, c := range spec.Indicators {
		sc.indicators[c] = true
	}
	sc.index()
	return sc
}

// index fills the derived fields: width and the class-name maps.
func (sc *schema) index() {
	sc.width = 0
	for _, c := range sc.columns {
		switch cs, ok := sc.cats[c]; {
		case ok:
			sc.width += len(cs)
		case sc.indicators[c]:
			sc.width += 2
		default:
			sc.width++
		}
	}
	sc.names = make([]map[string]int, len(sc.tasks))
	for j, t := range sc.tasks {
		if t.Kind == data.Classification && t.ClassNames != nil {
			sc.names[j] = map[string]int{}
			for c, name := range t.ClassNames {
				sc.names[j][name] = c
			}
		}
	}
}

// layout is where a file's header puts each column.
type layout struct {
	inputs  []int      // header positions of the schema's input columns
	cats    [][]string // per input column: its categories, nil numeric
	catAt   []map[string]int
	targets []int // per task, its position; nil: no targets read
	id      int   // -1: none
	indexed bool  // the first column is an unnamed index, skipped
}

// isIndex reports whether the header's first column is a row index
// without a name: empty (pandas' to_csv, R's write.csv) or "Unnamed: 0"
// (a frame read back with pandas and written again).
func isIndex(name string) bool {
	return name == "" || strings.HasPrefix(name, "Unnamed: ")
}

// trimHeader trims the header's names and checks them: none empty (but
// an index first) or twice.
// With legacy (Options.Legacy), "Unnamed: 0" is a column's name.
func trimHeader(path string, header []string, legacy bool) ([]string, bool, error) {
	names := make([]string, len(header))
	seen := map[string]bool{}
	indexed := false
	for c, name := range header {
		name = strings.TrimSpace(name)
		names[c] = name
		if c == 0 && isIndex(name) && len(header) > 1 && !(legacy && name != "") {
			indexed = true
			continue
		}
		if seen[name] || name == "" {
			return nil, false, csvError(path, "header: column %d, %q, is empty or named twice", c+1, name)
		}
		seen[name] = true
	}
	return names, indexed, nil
}

// defaultID is the id column where none is named: one called "id".
const defaultID = "id"

// trainLayout maps the training split's header: every column not a
// task's, the id (id, or else a column named defaultID), ignored or the
// index is an input. It returns the input columns' names and the id.
func trainLayout(path string, header []string, tasks []data.Task, id string, ignore []string, legacy bool) (*layout, []string, string, error) {
	names, indexed, err := trimHeader(path, header, legacy)
	if err != nil {
		return nil, nil, "", err
	}
	at := map[string]int{}
	for c, name := range names {
		if c > 0 || !indexed {
			at[name] = c
		}
	}
	lay := &layout{id: -1, indexed: indexed}
	isTask := map[string]bool{}
	if _, ok := at[defaultID]; id == "" && ok && !legacy && !slices.ContainsFunc(tasks, func(t data.Task) bool { return t.Name == defaultID }) {
		id = defaultID
	}
	for _, t := range tasks {
		isTask[t.Name] = true
		c, ok := at[t.Name]
		if !ok {
			return nil, nil, "", csvError(path, "no column for task %s (tasks.json names %s)", t.Name, taskNames(tasks))
		}
		lay.targets = append(lay.targets, c)
	}
	if id != "" {
		c, ok := at[id]
		if !ok {
			return nil, nil, "", csvError(path, "no id column %q", id)
		}
		if isTask[id] {
			return nil, nil, "", csvError(path, "column %q is both the id and a task", id)
		}
		lay.id = c
	}
	var inputs []string
	for c, name := range names {
		if (c == 0 && indexed) || isTask[name] || name == id || slices.Contains(ignore, name) {
			continue
		}
		lay.inputs = append(lay.inputs, c)
		inputs = append(inputs, name)
	}
	if len(inputs) == 0 {
		return nil, nil, "", csvError(path, "no input columns: every column is a task's, the id or ignored")
	}
	return lay, inputs, id, nil
}

// layoutOf maps the header of another split (needY: every task must
// have its column) or of predict's inputs (task columns are not read)
// onto the schema: each input column by name; a column that is neither
// an input, a task, the id nor ignored is an error.
func (sc *schema) layoutOf(path string, header []string, needY bool) (*layout, error) {
	// A first column the training split had as an input is no index.
	named := len(header) > 0 && slices.Contains(sc.columns, strings.TrimSpace(header[0]))
	names, indexed, err := trimHeader(path, header, named)
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	for c, name := range names {
		if c > 0 || !indexed {
			at[name] = c
		}
	}
	lay := &layout{id: -1, indexed: indexed}
	isTask := map[string]bool{}
	for _, t := range sc.tasks {
		isTask[t.Name] = true
		c, ok := at[t.Name]
		switch {
		case ok:
			lay.targets = append(lay.targets, c)
		case needY:
			return nil, csvError(path, "no column for task %s (tasks.json names %s)", t.Name, taskNames(sc.tasks))
		}
	}
	if !needY {
		lay.targets = nil // predict: targets are not read
	}
	if c, ok := at[sc.id]; ok && sc.id != "" {
		lay.id = c
	}
	for _, name := range sc.columns {
		c, ok := at[name]
		if !ok {
			return nil, csvError(path, "no column %q, an input of the training split", name)
		}
		lay.inputs = append(lay.inputs, c)
	}
	for c, name := range names {
		if (c == 0 && indexed) || isTask[name] || name == sc.id || slices.Contains(sc.ignore, name) || slices.Contains(sc.columns, name) {
			continue
		}
		return nil, csvError(path, "column %q is neither an input of the training split nor a task", name)
	}
	sc.categorize(lay)
	return lay, nil
}

// categorize sets lay's categories from the schema's.
func (sc *schema) categorize(lay *layout) {
	lay.cats = make([][]string, len(sc.columns))
	lay.catAt = make([]map[string]int, len(sc.columns))
	for k, name := range sc.columns {
		if cs, ok := sc.cats[name]; ok {
			lay.cats[k] = cs
			lay.catAt[k] = map[string]int{}
			for i, c := range cs {
				lay.catAt[k][c] = i
			}
		}
	}
}

// row is one record's parse: the inputs (width features) into x, the
// targets into y (NaN where missing), unless lay reads none. drop, where
// the policy is to drop a row with a missing input, reports one; under
// MissingImpute the input is filled (missingInput); else such a row is
// an error.
func (sc *schema) row(path string, names, rec []string, line int, lay *layout, x, y []float32, predict bool) (drop bool, err error) {
	f := 0
	for k, c := range lay.inputs {
		cell := strings.TrimSpace(rec[c])
		if sc.na.has(cell) {
			switch sc.missing {
			case MissingImpute:
				f += sc.missingInput(k, sc.columns[k], lay, x[f:])
				continue
			case MissingDrop:
				return true, nil
			}
			if predict {
				return false, csvError(path, "line %d, column %q: a missing value (%q); every input of a row to predict must be there (the run was trained with -missing %s)", line, names[c], cell, MissingRefuse)
			}
			return false, csvError(path, "line %d, column %q: a missing value (%q); fill it in, or drop such rows with -missing %s (or fill them from the training split: -missing %s)", line, names[c], cell, MissingDrop, MissingImpute)
		}
		if cs := lay.cats[k]; cs != nil {
			i, ok := lay.catAt[k][cell]
			if !ok {
				return false, csvError(path, "line %d, column %q: %s is not a category of the training split (%s)", line, names[c], short(cell), listShort(cs))
			}
			clear(x[f : f+len(cs)])
			x[f+i] = 1
			f += len(cs)
			continue
		}
		v, ok := number(cell)
		if !ok {
			return false, csvError(path, "line %d, column %q: %q is not a number", line, names[c], rec[c])
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
			return false, csvError(path, "line %d, column %q: %v (inputs must be finite float32s)", line, names[c], v)
		}
		x[f] = float32(v)
		f++
		if sc.indicators[sc.columns[k]] {
			x[f] = 0
			f++
		}
	}
	return false, sc.targets(path, names, rec, line, lay, y)
}

// targets reads a record's targets into y, NaN where missing: a label
// that tasks.json declares as a class name is that class, whatever it
// looks like.
func (sc *schema) targets(path string, names, rec []string, line int, lay *layout, y []float32) error {
	for j, c := range lay.targets {
		cell := strings.TrimSpace(rec[c])
		t := sc.tasks[j]
		if i, ok := sc.names[j][cell]; ok {
			y[j] = float32(i)
			continue
		}
		if sc.na.has(cell) {
			y[j] = float32(math.NaN()) // the task's loss skips the row
			continue
		}
		v, ok := number(cell)
		if !ok {
			if sc.names[j] != nil {
				return csvError(path, "line %d, column %q: %s is not a class of task %s (%s)", line, names[c], short(cell), t.Name, listShort(t.ClassNames))
			}
			return csvError(path, "line %d, column %q: %q is not a number", line, names[c], rec[c])
		}
		if msg := checkTarget(t, v); msg != "" {
			return csvError(path, "line %d, column %q: %v%s", line, names[c], v, msg)
		}
		y[j] = float32(v)
	}
	return nil
}
