package files

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/mtsgd/mtsgd/internal/regfile"
)

// ErrChanged is wrapped by Agrees' error: the data are not those a run
// recorded.
var ErrChanged = errors.New("the data have changed since the run started")

// changed is Agrees' error: one line naming the file or the field that
// differs.
type changed string

func (c changed) Error() string { return string(c) }

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
