package files

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/data"
)

// reading is how a data directory's splits are read: what tasks.json
// and the options say, and what the training split decided.
type reading struct {
	dir     string
	sep     rune
	desc    Description
	id      string // asked for; "" takes a column named "id"
	tasks   []data.Task
	missing string
	na      naSet
	shape   []int   // the training split's inputs; nil before it
	csv     *schema // the training split's, where it is a CSV file
	legacy  bool    // Options.Legacy
	notes   *[]string
}

func (rd *reading) note(format string, args ...any) {
	*rd.notes = append(*rd.notes, fmt.Sprintf(format, args...))
}

// split reads the split base of the directory, from base.npz or
// base.csv; nil where there is neither. A name that is there but cannot
// be opened (a dangling symlink, a file without read permission) is an
// error: taking it as no split would score the validation split as the
// test split, or hold out training examples, without a word.
func (rd *reading) split(base string) (*Set, error) {
	npzPath, csvPath := filepath.Join(rd.dir, base+".npz"), filepath.Join(rd.dir, base+".csv")
	hasNPZ, err := present(npzPath)
	if err != nil {
		return nil, err
	}
	hasCSV, err := present(csvPath)
	if err != nil {
		return nil, err
	}
	switch {
	case hasNPZ && hasCSV:
		return nil, fmt.Errorf("%w: %s has both %s.npz and %s.csv: keep one", data.ErrInvalid, rd.dir, base, base)
	case hasNPZ:
		return rd.npz(npzPath, base)
	case hasCSV:
		return rd.csvSplit(csvPath, base)
	}
	return nil, nil
}

// present says whether a directory entry named path exists, a symlink
// included whatever it points to; one that exists but whose target
// cannot be reached is an error naming it.
func present(path string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("%w: %s: %w", data.ErrInvalid, path, err)
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("%w: %s is there but cannot be opened (a symlink to a file that does not exist?): %w", data.ErrInvalid, path, err)
		}
		return false, fmt.Errorf("%w: %s is there but cannot be opened: %w", data.ErrInvalid, path, err)
	}
	return true, nil
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
		sc, lay, names, _, err := scanTrain(path, rd.sep, rd.desc, rd.tasks, rd.id, rd.legacy, rd.na, rd.missing)
		if err != nil {
			return nil, err
		}
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
		sc = &schema{tasks: rd.tasks, ignore: rd.desc.Ignore, missing: rd.missing, id: rd.id, na: rd.na}
		if sc.missing == MissingImpute {
			sc.missing = MissingRefuse // no training median to fill from
		}
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
	switch {
	case lay.indexed && sc.id == "":
		rd.note("%s: the first column has no name (%q): taken as the row index, not an input; predict gives it as each row's id", base, names[0])
	case lay.indexed:
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
	rd.note("%s: %d input columns, %d features: %s (every column but the tasks', the id and those ignored; a target missing from %s is among them)", base, len(sc.columns), sc.width, strings.Join(cols, ", "), TasksFile)
	for _, c := range names {
		if slices.Contains(sc.ignore, c) {
			rd.note("%s: column %q is neither an input nor a task (tasks.json's \"ignore\")", base, c)
		}
	}
	for j, t := range sc.tasks {
		if rd.desc.Tasks[j].ClassNames == nil && t.ClassNames != nil {
			rd.note("task %s: %d classes from the training split's labels, in sorted order: %s", t.Name, t.Classes, listShort(t.ClassNames))
		} else if t.Kind == data.Classification && rd.desc.Tasks[j].Classes == 0 && t.ClassNames == nil {
			rd.note("task %s: %d classes, from the largest label of %s", t.Name, t.Classes, base)
		}
		if u, ok := sc.unseen[j]; ok {
			rd.note("task %s: its labels in %s are %s, so classes %s have no training example; if the labels name classes rather than number them from 0, give %s's \"class_names\": [\"%s\"]",
				t.Name, base, listPlain(u.labels), listPlain(u.classes), TasksFile, strings.Join(u.labels, `", "`))
		}
	}
	if dropped > 0 {
		rd.note("%s: dropped %d rows with a missing input (-missing drop)", base, dropped)
	}
}
