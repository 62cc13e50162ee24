package files

import (
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// column is what the scan of the training split saw of one column.
type column struct {
	missing   int
	numbers   int
	numLine   int    // the first number's line
	numText   string // and its text
	bools     int    // numbers that are booleans
	text      int    // values that are not numbers
	textLine  int    // the first's line
	firstText string
	distinct  map[string]bool // every value, up to MaxCategories+1
	max       float64         // the largest number
}

func (c *column) see(cell string, line int, na naSet) {
	if na.has(cell) {
		c.missing++
		return
	}
	if len(c.distinct) <= MaxCategories {
		c.distinct[cell] = true
	}
	v, ok := number(cell)
	if !ok {
		if c.text == 0 {
			c.textLine, c.firstText = line, cell
		}
		c.text++
		return
	}
	if c.numbers == 0 || v > c.max {
		c.max = v
	}
	if c.numbers == 0 {
		c.numLine, c.numText = line, cell
	}
	c.numbers++
	switch cell {
	case "True", "TRUE", "true", "False", "FALSE", "false":
		c.bools++
	}
}

// categories is the column's distinct values, sorted, or an error where
// there are more than MaxCategories.
func (c *column) categories(path, name, what string) ([]string, error) {
	if len(c.distinct) > MaxCategories {
		return nil, csvError(path, "%s %q has more than %d distinct values (line %d: %s): too many for categories; an identifier or free text? List it in tasks.json's \"ignore\", or name it as the \"id\"",
			what, name, MaxCategories, c.textLine, short(c.firstText))
	}
	cs := make([]string, 0, len(c.distinct))
	for v := range c.distinct {
		cs = append(cs, v)
	}
	sort.Strings(cs)
	return cs, nil
}

// scanTrain reads the training CSV once to decide how to read it: each
// input column numeric or categorical (and its categories), each
// classification task's classes (and class names, from string labels),
// where tasks.json leaves them out.
func scanTrain(path string, sep rune, desc Description, tasks []data.Task, id string, legacy bool, na naSet, missing string) (*schema, *layout, []string, int, error) {
	f, r, header, err := openCSV(path, sep, true)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer f.Close()
	lay, inputs, id, err := trainLayout(path, header, tasks, id, desc.Ignore, legacy)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	for _, name := range desc.Categorical {
		if !slices.Contains(inputs, name) {
			return nil, nil, nil, 0, csvError(path, "tasks.json lists %q as categorical; it is not an input column (inputs: %s)", name, listShort(inputs))
		}
	}
	names, _, _ := trimHeader(path, header, false)
	cols := make([]column, len(header))
	for c := range cols {
		cols[c].distinct = map[string]bool{}
	}
	watch := append(slices.Clone(lay.inputs), lay.targets...)
	rows := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, 0, csvError(path, "%v", err)
		}
		line, _ := r.FieldPos(0) // only after a record was read: it panics otherwise
		for _, c := range watch {
			cols[c].see(strings.TrimSpace(rec[c]), line, na)
		}
		rows++
	}
	if rows == 0 {
		return nil, nil, nil, 0, csvError(path, "no examples")
	}
	sc := &schema{columns: inputs, cats: map[string][]string{}, tasks: slices.Clone(tasks), ignore: desc.Ignore, id: id, na: na, missing: missing}
	if err := sc.inputCategories(path, lay, cols, names, desc.Categorical); err != nil {
		return nil, nil, nil, 0, err
	}
	if err := sc.taskClasses(path, lay, cols, names); err != nil {
		return nil, nil, nil, 0, err
	}
	if missing == MissingImpute {
		sc.imputeMissing(lay, cols)
	}
	sc.index()
	sc.categorize(lay)
	if total, source := sysmem.Total(); 4*float64(rows)*float64(sc.width) > total/2 {
		return nil, nil, nil, 0, csvError(path, "%d rows of %d features would take %s, more than half the memory (%s, %s)",
			rows, sc.width, sysmem.Format(4*float64(rows)*float64(sc.width)), sysmem.Format(total), source)
	}
	return sc, lay, names, rows, nil
}

// inputCategories checks the input columns scanTrain read (cols, headed
// names) and records the categories of those that hold text or that
// tasks.json lists as categorical.
func (sc *schema) inputCategories(path string, lay *layout, cols []column, names, categorical []string) error {
	for _, c := range lay.inputs {
		col, name := &cols[c], names[c]
		forced := slices.Contains(categorical, name)
		switch {
		case col.numbers == 0 && col.text == 0:
			return csvError(path, "column %q has no values, every one missing; list it in tasks.json's \"ignore\"", name)
		case col.text > 0 && decimalComma.MatchString(col.firstText):
			return csvError(path, "line %d, column %q: %q has a decimal comma; write numbers with a decimal point (pandas: to_csv(decimal=\".\"))", col.textLine, name, col.firstText)
		case col.text > 0 && col.numbers > 0 && !forced:
			return csvError(path, "column %q mixes numbers (line %d: %s) and text (line %d: %s); correct the value, or list the column in tasks.json's \"categorical\" to one-hot encode it",
				name, col.numLine, short(col.numText), col.textLine, short(col.firstText))
		case col.text > 0 && !forced && checkNearUnique(path, name, col) != nil:
			return checkNearUnique(path, name, col)
		case col.text > 0 || forced:
			cs, err := col.categories(path, name, "column")
			if err != nil {
				return err
			}
			sc.cats[name] = cs
		}
	}
	return nil
}

// taskClasses checks the task columns scanTrain read and sets the classes
// of the classification tasks tasks.json leaves without class names:
// string labels' sorted distinct values, or, for numbers, the classes
// inferClasses finds.
func (sc *schema) taskClasses(path string, lay *layout, cols []column, names []string) error {
	for j, c := range lay.targets {
		t := &sc.tasks[j]
		col := &cols[c]
		if col.numbers == 0 && col.text == 0 {
			return csvError(path, "column %q: every label of task %s is missing", names[c], t.Name)
		}
		if t.Kind != data.Classification || t.ClassNames != nil {
			continue
		}
		switch {
		case col.text > 0:
			// String labels: the classes are their sorted distinct values.
			cs, err := col.categories(path, names[c], "task column")
			if err != nil {
				return err
			}
			for _, name := range cs {
				if err := CheckClassName(name); err != nil {
					return csvError(path, "column %q: task %s's label: %v", names[c], t.Name, err)
				}
			}
			if t.Classes != 0 && t.Classes != len(cs) {
				return csvError(path, "column %q: task %s has %d distinct labels (%s), tasks.json says %d classes; give its \"class_names\"",
					names[c], t.Name, len(cs), listShort(cs), t.Classes)
			}
			t.Classes, t.ClassNames = len(cs), cs
		case t.Classes == 0:
			var err error
			if t.Classes, err = inferClasses(path, names[c], *t, col.max, col.bools == col.numbers); err != nil {
				return err
			}
			if u, ok := unseenOf(col.distinct, t.Classes); ok && col.bools != col.numbers {
				if sc.unseen == nil {
					sc.unseen = map[int]unseenClasses{}
				}
				sc.unseen[j] = u
			}
		}
	}
	return nil
}

// unseenOf is the classes 0..classes-1 that no label of distinct (a
// task column's values) is, with the labels sorted as numbers; ok false
// where every class has a label.
func unseenOf(distinct map[string]bool, classes int) (unseenClasses, bool) {
	seen := map[int]bool{}
	var labels []float64
	for cell := range distinct {
		if v, ok := number(cell); ok {
			seen[int(v)] = true
			labels = append(labels, v)
		}
	}
	var u unseenClasses
	for c := range classes {
		if !seen[c] {
			u.classes = append(u.classes, strconv.Itoa(c))
		}
	}
	slices.Sort(labels)
	for _, v := range labels {
		u.labels = append(u.labels, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return u, len(u.classes) > 0
}

// inferClasses is the classes of a classification task whose labels are
// numbers and whose tasks.json gives no "classes": the largest label
// plus one (two for booleans).
func inferClasses(path, column string, t data.Task, largest float64, booleans bool) (int, error) {
	if booleans {
		return 2, nil
	}
	if largest < 1 || largest >= MaxCategories || largest != math.Trunc(largest) {
		return 0, csvError(path, "column %q: task %s's labels go up to %v, which gives no number of classes from 2 to %d; give \"classes\" in tasks.json",
			column, t.Name, largest, MaxCategories)
	}
	return int(largest) + 1, nil
}
