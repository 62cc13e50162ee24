package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
)

// outputs are the files predict writes: every -out, and -show's PNG.
func (o Options) outputs() []string {
	outs := append([]string(nil), o.Out...)
	if o.Show != "" {
		outs = append(outs, o.Show)
	}
	if o.skipped != "" {
		outs = append(outs, o.skipped)
	}
	return outs
}

// checkOutputs refuses, before any prediction is computed, an output
// that would destroy input or cannot be written: the -data file itself
// (by inode, so a link or another spelling of its path is caught), any
// file in the checkpoint's data directory dataDir (its training files),
// a directory, two outputs that are one file, and a directory where
// predict cannot create a file.
func checkOutputs(o Options, dataDir string) error {
	dataSt, dataErr := os.Stat(o.Data)
	dirSt, dirErr := os.Stat(dataDir)
	var seen []os.FileInfo
	for _, out := range o.outputs() {
		flag := "-out"
		if out == o.Show {
			flag = "-show"
		}
		if st, err := os.Stat(out); err == nil {
			switch {
			case st.IsDir():
				return cli.Usage(fmt.Errorf("%s %s: a directory", flag, out))
			case dataErr == nil && os.SameFile(st, dataSt):
				return cli.Usage(fmt.Errorf("%s %s: the -data file %s itself; write predictions elsewhere", flag, out, o.Data))
			}
			for _, s := range seen {
				if os.SameFile(st, s) {
					return cli.Usage(fmt.Errorf("%s %s: the same file as another output", flag, out))
				}
			}
			seen = append(seen, st)
		}
		parent := filepath.Dir(out)
		pst, err := os.Stat(parent)
		switch {
		case err != nil:
			return cli.Usage(fmt.Errorf("%s %s: %w", flag, out, err))
		case !pst.IsDir():
			return cli.Usage(fmt.Errorf("%s %s: %s is not a directory", flag, out, parent))
		case dataDir != "" && dirErr == nil && os.SameFile(pst, dirSt):
			return cli.Usage(fmt.Errorf("%s %s: in the checkpoint's data directory %s, beside its training files; write predictions elsewhere", flag, out, dataDir))
		}
		f, err := os.CreateTemp(parent, ".predict-check-*")
		if err != nil {
			return cli.Usage(fmt.Errorf("%s %s: cannot write there: %w", flag, out, err))
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

// outputError names the outputs in a failed write's error: the
// predictions go through temporary column files beside them, whose
// names (.predict-123/0-1) would say nothing of which output a full disk
// stopped. Errors that are not of the file system pass as they are.
func (o Options) outputError(err error) error {
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) {
		return err
	}
	for _, out := range o.outputs() {
		if strings.Contains(err.Error(), out) {
			return err // it names its output already
		}
	}
	return fmt.Errorf("writing %s: %w", strings.Join(o.outputs(), " and "), err)
}
