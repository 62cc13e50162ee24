package files

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// The bounds on a CSV file's lines. encoding/csv holds a whole line, and
// its memory grows with about four times the longest, so a file with no
// newline (a binary file, a sparse one) would be read until memory runs
// out: the header may be at most maxCSVHeader bytes long, and a line
// after it csvLineBase bytes and csvColumnBytes per column of the
// header (a float32 in its shortest form takes at most 15, so this
// leaves room for spaces, quotes and category names).
const (
	maxCSVHeader   = 16 << 20
	csvLineBase    = 1024
	csvColumnBytes = 128
)

// MaxCategories bounds the distinct values of a categorical input column
// and of a task's string labels: more is an identifier or free text,
// whose one-hot encoding would only memorise rows.
const MaxCategories = 1000

// bom is the UTF-8 byte-order mark that Excel's "CSV UTF-8" and Notepad
// put first: not part of the first column's name.
var bom = []byte("\xEF\xBB\xBF")

// Missing-value policies for CSV inputs (Options.Missing).
const (
	// MissingError refuses a missing input, naming its file, line and
	// column: the default, since a silently dropped or filled row
	// changes what the model learns.
	MissingError = "error"
	// MissingDrop drops a training, validation or test row with a
	// missing input, and says how many were dropped.
	MissingDrop = "drop"
)

// missingCell reports whether a CSV cell, trimmed, is a missing value
// as pandas (an empty cell, NaN, <NA>, None) and R (NA) write them; the
// set is that pandas.read_csv reads as missing.
func missingCell(s string) bool {
	switch s {
	case "", "NA", "NaN", "nan", "-NaN", "-nan", "N/A", "n/a", "NULL", "null", "None", "<NA>", "#N/A", "#N/A N/A", "#NA",
		"-1.#IND", "-1.#QNAN", "1.#IND", "1.#QNAN":
		return true
	}
	return false
}

// number reads a trimmed CSV cell as a number: a decimal or float
// literal, or a boolean as pandas (True, False) and R (TRUE, FALSE)
// write them, 1 or 0. A value too large for a float64 is ±Inf.
func number(s string) (float64, bool) {
	switch s {
	case "True", "TRUE", "true":
		return 1, true
	case "False", "FALSE", "false":
		return 0, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

// decimalComma matches a number written with a decimal comma (1,5):
// under a ";" separator, what a spreadsheet in many locales writes.
var decimalComma = regexp.MustCompile(`^[-+]?[0-9]*,[0-9]+$`)

// lineLimit passes a reader through, failing once a line runs past
// limit bytes.
type lineLimit struct {
	r     io.Reader
	limit int // bytes of the current line at most
	run   int // bytes of the current line so far
	line  int // lines started, from 1
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.run += len(rest)
			break
		}
		if l.run += i; l.run > l.limit {
			break
		}
		l.run, l.line, rest = 0, l.line+1, rest[i+1:]
	}
	if l.run > l.limit {
		return 0, fmt.Errorf("line %d: longer than %d bytes (a line holds one example; is this a CSV file?)", l.line, l.limit)
	}
	return n, err
}

// columns bounds the lines after a header of n columns.
func (l *lineLimit) columns(n int) {
	l.limit = csvLineBase + csvColumnBytes*n
}

// sepPeek is how much of a file the separator is detected from: the
// header's first 64 KiB.
const sepPeek = 64 << 10

// csvReader is a CSV reader of r, its byte-order mark skipped, its
// header no longer than maxCSVHeader, and its separator sep or, if sep
// is 0, the one of ",", ";" and tab that the header line holds most of
// outside quotes (a comma where there is none: one column).
func csvReader(r io.Reader, sep rune) (*csv.Reader, *lineLimit) {
	br := bufio.NewReaderSize(r, sepPeek)
	if b, err := br.Peek(len(bom)); err == nil && bytes.Equal(b, bom) {
		br.Discard(len(bom))
	}
	if sep == 0 {
		head, _ := br.Peek(sepPeek)
		sep = detectSep(head)
	}
	lim := &lineLimit{r: br, limit: maxCSVHeader, line: 1}
	cr := csv.NewReader(lim)
	cr.Comma = sep
	cr.ReuseRecord = true
	return cr, lim
}

// detectSep is the separator of a CSV header line (the text up to its
// first newline outside quotes).
func detectSep(head []byte) rune {
	var n [3]int
	seps := [3]byte{',', ';', '\t'}
	quoted := false
	for _, c := range head {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if c == '\n' {
			break
		}
		for k, s := range seps {
			if c == s {
				n[k]++
			}
		}
	}
	best := 0
	for k := range n {
		if n[k] > n[best] {
			best = k
		}
	}
	return rune(seps[best])
}

// ParseSep reads a -sep option: "" (found from each file's header), ",",
// ";", or a tab as "\t" or "tab".
func ParseSep(s string) (rune, error) {
	switch s {
	case "":
		return 0, nil
	case ",", ";", "|":
		return rune(s[0]), nil
	case "\t", `\t`, "tab":
		return '\t', nil
	}
	return 0, fmt.Errorf("separator %q is not \",\", \";\", \"|\" or \"tab\"", s)
}

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
}

// newSchema is the schema of a spec: that recorded by a run, or
// decided by its training split.
func newSchema(spec *Spec) *schema {
	sc := &schema{columns: spec.Columns, cats: spec.Categories, tasks: spec.DataTasks(), id: spec.ID, ignore: spec.Ignore, missing: spec.Missing}
	sc.index()
	return sc
}

// index fills the derived fields: width and the class-name maps.
func (sc *schema) index() {
	sc.width = 0
	for _, c := range sc.columns {
		if cs, ok := sc.cats[c]; ok {
			sc.width += len(cs)
		} else {
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

// csvError is an error about a file's content, naming the file.
func csvError(path, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", data.ErrInvalid, path, fmt.Sprintf(format, args...))
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
// the policy is to drop a row with a missing input, reports one; without
// it such a row is an error. predict (inputs only) cannot drop a row.
func (sc *schema) row(path string, names, rec []string, line int, lay *layout, x, y []float32, predict bool) (drop bool, err error) {
	f := 0
	for k, c := range lay.inputs {
		cell := strings.TrimSpace(rec[c])
		if missingCell(cell) {
			switch {
			case predict:
				return false, csvError(path, "line %d, column %q: a missing value (%q); every input of a row to predict must be there", line, names[c], cell)
			case sc.missing == MissingDrop:
				return true, nil
			}
			return false, csvError(path, "line %d, column %q: a missing value (%q); fill it in, or drop such rows with -missing drop", line, names[c], cell)
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
	}
	for j, c := range lay.targets {
		cell := strings.TrimSpace(rec[c])
		t := sc.tasks[j]
		if missingCell(cell) {
			y[j] = float32(math.NaN()) // the task's loss skips the row
			continue
		}
		if i, ok := sc.names[j][cell]; ok {
			y[j] = float32(i)
			continue
		}
		v, ok := number(cell)
		if !ok {
			if sc.names[j] != nil {
				return false, csvError(path, "line %d, column %q: %s is not a class of task %s (%s)", line, names[c], short(cell), t.Name, listShort(t.ClassNames))
			}
			return false, csvError(path, "line %d, column %q: %q is not a number", line, names[c], rec[c])
		}
		if msg := checkTarget(t, v); msg != "" {
			return false, csvError(path, "line %d, column %q: %v%s", line, names[c], v, msg)
		}
		y[j] = float32(v)
	}
	return false, nil
}

// listShort lists names for a message, the first ten.
func listShort(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == 10 {
			fmt.Fprintf(&b, ", … %d in all", len(names))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(short(n))
	}
	return b.String()
}

// checkMemory refuses a CSV file whose text, at 4 bytes of memory per 2
// of text, would need more than half the machine's memory.
func checkMemory(path string, size int64) error {
	if total, source := sysmem.Total(); 2*float64(size) > total/2 {
		return csvError(path, "%s of text may hold %s of numbers, more than half the memory (%s, %s); split it, or use an .npz archive",
			sysmem.Format(float64(size)), sysmem.Format(2*float64(size)), sysmem.Format(total), source)
	}
	return nil
}

// openCSV opens a CSV file and reads its header; whole, the file is
// read into memory, whose bound it must fit (predict's inputs are read a
// chunk at a time).
func openCSV(path string, sep rune, whole bool) (*os.File, *csv.Reader, []string, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkMemory(path, st.Size()); whole && err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	r, lim := csvReader(f, sep)
	header, err := r.Read()
	if err != nil {
		f.Close()
		return nil, nil, nil, csvError(path, "reading the header: %v", err)
	}
	header = slices.Clone(header)
	lim.columns(len(header))
	return f, r, header, nil
}

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

func (c *column) see(cell string, line int) {
	if missingCell(cell) {
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
func scanTrain(path string, sep rune, desc Description, tasks []data.Task, id string, legacy bool) (*schema, *layout, []string, int, error) {
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
			cols[c].see(strings.TrimSpace(rec[c]), line)
		}
		rows++
	}
	if rows == 0 {
		return nil, nil, nil, 0, csvError(path, "no examples")
	}
	sc := &schema{columns: inputs, cats: map[string][]string{}, tasks: slices.Clone(tasks), ignore: desc.Ignore, id: id}
	if err := sc.inputCategories(path, lay, cols, names, desc.Categorical); err != nil {
		return nil, nil, nil, 0, err
	}
	if err := sc.taskClasses(path, lay, cols, names); err != nil {
		return nil, nil, nil, 0, err
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
		}
	}
	return nil
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

// readCSV reads a split from a CSV file as the schema says (lay: the
// training split's, from its scan; nil: found from the header). It
// returns the number of rows dropped for a missing input.
func readCSV(path, split string, sep rune, sc *schema, lay *layout) (*Set, int, error) {
	f, r, header, err := openCSV(path, sep, true)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if lay == nil {
		if lay, err = sc.layoutOf(path, header, true); err != nil {
			return nil, 0, err
		}
	}
	names, _, _ := trimHeader(path, header, false)
	s := &Set{name: Name + "/" + split, path: path, tasks: sc.tasks, shape: []int{sc.width}, size: sc.width, per: 1, columns: sc.columns}
	x, y := make([]float32, sc.width), make([]float32, len(sc.tasks))
	dropped := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, csvError(path, "%v", err)
		}
		line, _ := r.FieldPos(0)
		drop, err := sc.row(path, names, rec, line, lay, x, y, false)
		if err != nil {
			return nil, 0, err
		}
		if drop {
			dropped++
			continue
		}
		s.floats = append(s.floats, x...)
		s.y = append(s.y, y...)
		if lay.id >= 0 {
			s.ids = append(s.ids, strings.TrimSpace(rec[lay.id]))
		}
	}
	if len(s.floats) == 0 {
		if dropped > 0 {
			return nil, 0, csvError(path, "no examples left: every one of its %d rows has a missing input", dropped)
		}
		return nil, 0, csvError(path, "no examples")
	}
	return s, dropped, nil
}

// csvInputs is the CSV side of Inputs: the reader, and where the
// columns are.
type csvInputs struct {
	f      *os.File
	r      *csv.Reader
	header []string
	lay    *layout
	sc     *schema
	ids    []string // the last chunk's
}

// openCSV counts the file's examples, then opens it again to read them,
// so that memory holds a chunk.
func (in *Inputs) openCSV() error {
	if len(in.spec.Shape) != 1 {
		return fmt.Errorf("%w: %s: the model was trained on inputs of shape %v; a CSV file holds vectors", data.ErrInvalid, in.path, in.spec.Shape)
	}
	sep, err := ParseSep(in.spec.Sep)
	if err != nil {
		return err
	}
	n, err := countRecords(in.path, sep)
	if err != nil {
		return err
	}
	f, r, header, err := openCSV(in.path, sep, false)
	if err != nil {
		return err
	}
	sc := newSchema(in.spec)
	if sc.columns == nil {
		// The training split was an archive: every column not a task's
		// (nor the id, ignored or the index) is an input, in order.
		names, indexed, err := trimHeader(in.path, header, false)
		if err != nil {
			f.Close()
			return err
		}
		for c, name := range names {
			if (c == 0 && indexed) || name == sc.id || slices.Contains(sc.ignore, name) ||
				slices.ContainsFunc(sc.tasks, func(t data.Task) bool { return t.Name == name }) {
				continue
			}
			sc.columns = append(sc.columns, name)
		}
		sc.index()
	}
	lay, err := sc.layoutOf(in.path, header, false)
	if err == nil && sc.width != in.spec.Shape[0] {
		err = fmt.Errorf("%w: %s: %d input features; the model was trained on %d", data.ErrInvalid, in.path, sc.width, in.spec.Shape[0])
	}
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: %s: no examples", data.ErrInvalid, in.path)
	}
	if err != nil {
		f.Close()
		return err
	}
	names, _, _ := trimHeader(in.path, header, false)
	in.csv = &csvInputs{f: f, r: r, header: names, lay: lay, sc: sc}
	in.shape, in.n = in.spec.Shape, n
	return nil
}

// countRecords counts a CSV file's records after its header.
func countRecords(path string, sep rune) (int, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, lim := csvReader(f, sep)
	n := -1
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return max(n, 0), nil
		}
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
		}
		if n < 0 {
			lim.columns(len(rec))
		}
		n++
	}
}

// next reads m records' inputs into s.floats, and their ids.
func (c *csvInputs) next(path string, s *Set, m int) error {
	w := c.sc.width
	s.floats = make([]float32, m*w)
	c.ids = nil
	for i := range m {
		rec, err := c.r.Read()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the file changed since it was counted
			}
			return fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
		}
		line, _ := c.r.FieldPos(0)
		if _, err := c.sc.row(path, c.header, rec, line, c.lay, s.floats[i*w:(i+1)*w], nil, true); err != nil {
			return err
		}
		if c.lay.id >= 0 {
			c.ids = append(c.ids, strings.TrimSpace(rec[c.lay.id]))
		}
	}
	return nil
}
