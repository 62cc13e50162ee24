package main

import (
	"flag"
	"fmt"

	"github.com/mtsgd/mtsgd/data/files"
)

// filesFlags are the flags of -data DIR that say how its files are
// read; the run's spec records them, so that -resume, eval and predict
// read the files as training did.
type filesFlags struct {
	sep, missing string
	standardize  bool
}

// filesFlagNames are the flags that need -data.
var filesFlagNames = []string{"sep", "missing", "standardize-targets"}

func addFilesFlags(fs *flag.FlagSet) *filesFlags {
	f := &filesFlags{}
	fs.StringVar(&f.sep, "sep", "", `-data: the CSV files' separator, ",", ";", "|" or "tab" (default: found from each file's header)`)
	fs.StringVar(&f.missing, "missing", files.MissingError, "-data: a missing CSV input (empty, NA, NaN): "+files.MissingError+" refuses it, naming the file, line and column; "+files.MissingDrop+" drops its row. A missing label masks its task's loss on that row")
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
	if f.missing != files.MissingError && f.missing != files.MissingDrop {
		return fmt.Errorf("-missing %q is not %s or %s", f.missing, files.MissingError, files.MissingDrop)
	}
	return nil
}

// spec is a new run's spec of the files in dir: the options it asks for.
func (f *filesFlags) spec(dir string) *files.Spec {
	s := &files.Spec{Dir: dir, Sep: f.sep, RawTargets: !f.standardize}
	if f.missing != files.MissingError {
		s.Missing = f.missing
	}
	return s
}
