package files

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/regfile"
)

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
		if c := lay.idColumn(sc); c >= 0 {
			s.ids = append(s.ids, strings.TrimSpace(rec[c]))
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
	f       *os.File
	r       *csv.Reader
	header  []string
	lay     *layout
	sc      *schema
	ids     []string  // the last chunk's
	skipped []Skipped // rows left out so far
}

// openCSV opens the file, maps its header, and counts the examples to
// predict (under MissingDrop, the rows with every input), then reads
// them from a second opening, so that memory holds a chunk.
func (in *Inputs) openCSV() error {
	if len(in.spec.Shape) != 1 {
		return fmt.Errorf("%w: %s: the model was trained on inputs of shape %v; a CSV file holds vectors", data.ErrInvalid, in.path, in.spec.Shape)
	}
	sep, err := ParseSep(in.spec.Sep)
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
	n := 0
	if err == nil {
		keep := func([]string) bool { return true }
		if sc.missing == MissingDrop {
			keep = func(rec []string) bool { return !sc.anyMissing(rec, lay) }
		}
		n, err = countRecords(in.path, sep, keep)
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

// anyMissing reports whether a record has a missing input.
func (sc *schema) anyMissing(rec []string, lay *layout) bool {
	for _, c := range lay.inputs {
		if sc.na.has(strings.TrimSpace(rec[c])) {
			return true
		}
	}
	return false
}

// countRecords counts a CSV file's records after its header that keep
// holds true of.
func countRecords(path string, sep rune, keep func(rec []string) bool) (int, error) {
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
		switch {
		case n < 0:
			lim.columns(len(rec))
			n++
		case keep(rec):
			n++
		}
	}
}

// next reads the inputs of the next m records to predict into
// s.floats, and their ids; under MissingDrop a record with a missing
// input is skipped, and listed in c.skipped.
func (c *csvInputs) next(path string, s *Set, m int) error {
	w := c.sc.width
	s.floats = make([]float32, m*w)
	c.ids = nil
	idAt := c.lay.idColumn(c.sc)
	for i := 0; i < m; {
		rec, err := c.r.Read()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the file changed since it was counted
			}
			return fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
		}
		line, _ := c.r.FieldPos(0)
		skip, err := c.sc.row(path, c.header, rec, line, c.lay, s.floats[i*w:(i+1)*w], nil, true)
		if err != nil {
			return err
		}
		id := ""
		if idAt >= 0 {
			id = strings.TrimSpace(rec[idAt])
		}
		if skip {
			c.skipped = append(c.skipped, Skipped{Line: line, ID: id})
			continue
		}
		if idAt >= 0 {
			c.ids = append(c.ids, id)
		}
		i++
	}
	return nil
}

// Skipped is a row of predict's inputs left out for a missing input
// (MissingDrop): its line in the file and its id ("" without one).
type Skipped struct {
	Line int
	ID   string
}

// Skipped are the rows read so far that were left out for a missing
// input, under MissingDrop; nil under the other policies.
func (in *Inputs) Skipped() []Skipped {
	if in.csv == nil {
		return nil
	}
	return in.csv.skipped
}

// drain reads the records after the last one to predict: under
// MissingDrop, rows with a missing input, listed in c.skipped.
func (c *csvInputs) drain(path string) error {
	idAt := c.lay.idColumn(c.sc)
	for {
		rec, err := c.r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
		}
		line, _ := c.r.FieldPos(0)
		if !c.sc.anyMissing(rec, c.lay) {
			return fmt.Errorf("%w: %s: line %d: more rows than were counted (the file changed while it was read)", data.ErrInvalid, path, line)
		}
		id := ""
		if idAt >= 0 {
			id = strings.TrimSpace(rec[idAt])
		}
		c.skipped = append(c.skipped, Skipped{Line: line, ID: id})
	}
}
