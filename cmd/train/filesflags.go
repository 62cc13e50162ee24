package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/mtsgd/mtsgd/data/files"
)

// filesFlags are the flags of -data DIR that say how its files are
// read; the run's spec records them, so that -resume, eval and predict
// read the files as training did.
type filesFlags struct {
	sep, missing, naValues, id string
	standardize                bool
}

// filesFlagNames are the flags that need -data.
var filesFlagNames = []string{"sep", "missing", "na-values", "id", "standardize-targets"}

func addFilesFlags(fs *flag.FlagSet) *filesFlags {
	f := &filesFlags{}
	fs.StringVar(&f.sep, "sep", "", `-data: the CSV files' separator, ",", ";", "|" or "tab" (default: found from each file's header)`)
	fs.StringVar(&f.missing, "missing", files.MissingImpute, "-data: a missing CSV input (empty, NA, NaN): "+files.MissingImpute+" fills it from the training split (a numeric column's median and a missing-indicator input, a categorical one's \""+files.MissingCategory+"\" category); "+files.MissingDrop+" drops its row (predict skips it, listing it in a side file); "+files.MissingRefuse+" refuses it, naming the file, line and column. A missing label masks its task's loss on that row")
	fs.StringVar(&f.naValues, "na-values", "", `-data: comma-separated CSV cells read as missing besides "", "NA" and "NaN" (e.g. None,null)`)
	fs.StringVar(&f.id, "id", "", `-data: the CSV column that identifies the rows, carried to predict's outputs (default: tasks.json's "id", a column named id, else an unnamed first column)`)
	fs.BoolVar(&f.standardize, "standardize-targets", true, "-data: train regression tasks on targets standardised with the training split's mean and deviation (scores and predictions stay in the data's units)")
	return f
}

// check refuses the flags without -data, and values they cannot take.
func (f *filesFlags) check(set map[string]bool) error {
	for _, name := range filesFlagNames {
		if set[name] && !set["data"] {
			return fmt.Errorf("-%s says how the files of -data DIR are read; it needs -data", name)
		}
	}
	if _, err := files.ParseSep(f.sep); err != nil {
		return fmt.Errorf("-sep: %w", err)
	}
	switch f.missing {
	case files.MissingImpute, files.MissingDrop, files.MissingRefuse, files.MissingError:
	default:
		return fmt.Errorf("-missing %q is not %s, %s or %s", f.missing, files.MissingImpute, files.MissingDrop, files.MissingRefuse)
	}
	if _, err := files.ParseNAValues(f.naValues); err != nil {
		return err
	}
	return nil
}

// spec is a new run's spec of the files in dir: the options it asks for.
func (f *filesFlags) spec(dir string) *files.Spec {
	na, _ := files.ParseNAValues(f.naValues) // checked by check
	s := &files.Spec{Dir: dir, Sep: f.sep, RawTargets: !f.standardize, NAValues: na, ID: f.id}
	if f.missing != files.MissingError && f.missing != files.MissingRefuse {
		s.Missing = f.missing
	}
	return s
}

// dataName names a data directory in a default run directory: its last
// element and 6 hex digits of the SHA-256 of its absolute path, so that
// two directories of the same name (data/a/penguins, data/b/penguins)
// never share a default, and one directory always gets the same.
func dataName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Base(abs) + "-" + hex.EncodeToString(sum[:3])
}
