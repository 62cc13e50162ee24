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
	"slices"
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
// leaves room for spaces and quotes).
const (
	maxCSVHeader   = 16 << 20
	csvLineBase    = 1024
	csvColumnBytes = 128
)

// bom is the UTF-8 byte-order mark that Excel's "CSV UTF-8" and Notepad
// put first: not part of the first column's name.
var bom = []byte("\xEF\xBB\xBF")

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

// csvReader is a CSV reader of r, its byte-order mark skipped and its
// header no longer than maxCSVHeader; csvColumns sets the other lines'
// bound once the header is read.
func csvReader(r io.Reader) (*csv.Reader, *lineLimit) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(bom)); err == nil && bytes.Equal(b, bom) {
		br.Discard(len(bom))
	}
	lim := &lineLimit{r: br, limit: maxCSVHeader, line: 1}
	cr := csv.NewReader(lim)
	cr.ReuseRecord = true
	return cr, lim
}

// columns bounds the lines after a header of n columns.
func (l *lineLimit) columns(n int) {
	l.limit = csvLineBase + csvColumnBytes*n
}

// A split may be a CSV file instead of an archive, for tabular data:
// base.csv, a header naming the columns, then one example per line. The
// columns named as tasks in tasks.json are the targets, every other
// column an input (a vector of D features, in the order of the training
// file's columns, which the other splits and predict find by name).

// csvColumns maps a CSV header to the input and target columns. inputs,
// if not nil, are the input columns' names the file must have (those of
// the training split); without them every column not a task's is an
// input, in order. needY: every task must have its column.
func csvColumns(path string, header []string, tasks []data.Task, inputs []string, needY bool) (in, targets []int, names []string, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", data.ErrInvalid, path, fmt.Sprintf(format, args...))
	}
	at := map[string]int{}
	for c, name := range header {
		name = strings.TrimSpace(name)
		if _, dup := at[name]; dup || name == "" {
			return nil, nil, nil, bad("header: column %d, %q, is empty or named twice", c+1, name)
		}
		at[name] = c
	}
	isTask := map[string]bool{}
	for _, t := range tasks {
		isTask[t.Name] = true
		c, ok := at[t.Name]
		switch {
		case ok:
			targets = append(targets, c)
		case needY:
			return nil, nil, nil, bad("no column for task %s (tasks.json names %s)", t.Name, taskNames(tasks))
		}
	}
	if len(targets) != len(tasks) {
		targets = nil // predict: targets are not read
	}
	if inputs == nil {
		for _, name := range header {
			if name = strings.TrimSpace(name); !isTask[name] {
				in = append(in, at[name])
				names = append(names, name)
			}
		}
		if len(in) == 0 {
			return nil, nil, nil, bad("no input columns: every column is a task's")
		}
		return in, targets, names, nil
	}
	for _, name := range inputs {
		c, ok := at[name]
		if !ok {
			return nil, nil, nil, bad("no column %q, an input of the training split", name)
		}
		in = append(in, c)
	}
	for _, name := range header {
		if name = strings.TrimSpace(name); !isTask[name] && !slices.Contains(inputs, name) {
			return nil, nil, nil, bad("column %q is neither an input of the training split nor a task", name)
		}
	}
	return in, targets, slices.Clone(inputs), nil
}

// readCSV reads a split from a CSV file; shape and columns, if not nil,
// are the training split's.
func readCSV(path, split string, tasks []data.Task, shape []int, columns []string) (*Set, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Each value takes 2 bytes of text at least and 4 of memory.
	if total, source := sysmem.Total(); 2*float64(st.Size()) > total/2 {
		return nil, fmt.Errorf("%w: %s: %s of text may hold %s of numbers, more than half the memory (%s, %s); split it, or use an .npz archive",
			data.ErrInvalid, path, sysmem.Format(float64(st.Size())), sysmem.Format(2*float64(st.Size())), sysmem.Format(total), source)
	}
	r, lim := csvReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: reading the header: %w", data.ErrInvalid, path, err)
	}
	header = slices.Clone(header)
	lim.columns(len(header))
	in, targets, names, err := csvColumns(path, header, tasks, columns, true)
	if err != nil {
		return nil, err
	}
	s := &Set{name: Name + "/" + split, path: path, tasks: tasks, shape: []int{len(in)}, size: len(in), per: 1, columns: names}
	if shape != nil && !slices.Equal(shape, s.shape) {
		return nil, fmt.Errorf("%w: %s: inputs of shape %v, the training split's are %v", data.ErrInvalid, path, s.shape, shape)
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
		}
		line, _ := r.FieldPos(0) // only after a record was read: it panics otherwise
		for _, c := range in {
			v, err := parseCSV(path, header, rec, c, line)
			if err != nil {
				return nil, err
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
				return nil, fmt.Errorf("%w: %s: line %d, column %q: %v (inputs must be finite float32s)", data.ErrInvalid, path, line, header[c], v)
			}
			s.floats = append(s.floats, float32(v))
		}
		for j, c := range targets {
			v, err := parseCSV(path, header, rec, c, line)
			if err != nil {
				return nil, err
			}
			if msg := checkTarget(tasks[j], v); msg != "" {
				return nil, fmt.Errorf("%w: %s: line %d, column %q: %v%s", data.ErrInvalid, path, line, header[c], v, msg)
			}
			s.y = append(s.y, float32(v))
		}
	}
	if len(s.floats) == 0 {
		return nil, fmt.Errorf("%w: %s: no examples", data.ErrInvalid, path)
	}
	return s, nil
}

func parseCSV(path string, header, rec []string, c, line int) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(rec[c]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%w: %s: line %d, column %q: %q is not a number", data.ErrInvalid, path, line, header[c], rec[c])
	}
	return v, nil
}

// csvInputs is the CSV side of Inputs: the reader, and which columns
// are the inputs.
type csvInputs struct {
	f      *os.File
	r      *csv.Reader
	header []string
	in     []int
}

// openCSV counts the file's examples, then opens it again to read them,
// so that memory holds a chunk.
func (in *Inputs) openCSV() error {
	if len(in.spec.Shape) != 1 {
		return fmt.Errorf("%w: %s: the model was trained on inputs of shape %v; a CSV file holds vectors", data.ErrInvalid, in.path, in.spec.Shape)
	}
	n, err := countRecords(in.path)
	if err != nil {
		return err
	}
	f, _, err := regfile.Open(in.path)
	if err != nil {
		return err
	}
	r, lim := csvReader(f)
	header, err := r.Read()
	if err != nil {
		f.Close()
		return fmt.Errorf("%w: %s: reading the header: %w", data.ErrInvalid, in.path, err)
	}
	header = slices.Clone(header)
	lim.columns(len(header))
	cols, _, _, err := csvColumns(in.path, header, in.tasks, in.spec.Columns, false)
	if err == nil && len(cols) != in.spec.Shape[0] {
		err = fmt.Errorf("%w: %s: %d input columns; the model was trained on %d", data.ErrInvalid, in.path, len(cols), in.spec.Shape[0])
	}
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: %s: no examples", data.ErrInvalid, in.path)
	}
	if err != nil {
		f.Close()
		return err
	}
	in.csv = &csvInputs{f: f, r: r, header: header, in: cols}
	in.shape, in.n = in.spec.Shape, n
	return nil
}

// countRecords counts a CSV file's records after its header.
func countRecords(path string) (int, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, lim := csvReader(f)
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

// next reads m records' inputs into s.floats.
func (c *csvInputs) next(path string, s *Set, m int) error {
	s.floats = make([]float32, 0, m*len(c.in))
	for range m {
		rec, err := c.r.Read()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the file changed since it was counted
			}
			return fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
		}
		line, _ := c.r.FieldPos(0)
		for _, col := range c.in {
			v, err := parseCSV(path, c.header, rec, col, line)
			if err != nil {
				return err
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
				return fmt.Errorf("%w: %s: line %d, column %q: %v (inputs must be finite float32s)", data.ErrInvalid, path, line, c.header[col], v)
			}
			s.floats = append(s.floats, float32(v))
		}
	}
	return nil
}
