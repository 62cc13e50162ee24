package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/jsondiff"
)

// ResultFile is a finished run's result in its run directory: its
// settings and every epoch's validation and test scores, a few kilobytes
// that -aggregate reads without the checkpoints. A sweep's result files
// and plan.json are all that a repository needs to keep to rebuild its
// tables.
const ResultFile = "result.json"

// Result is what ResultFile holds.
type Result struct {
	Settings experiment.Settings      `json:"settings"`
	History  []experiment.MetricsLine `json:"history"`
	// Diverged is the error that stopped a run of the tuned protocol on
	// a NaN or Inf; History then holds the epochs before it.
	Diverged string `json:"diverged,omitempty"`
	// Skipped says why a search cell above the grid was not tried
	// (Search.Extend); History is then empty.
	Skipped string `json:"skipped,omitempty"`
	// Assessed are a study's scores of the run's checkpoints last/ and
	// best/ on the test split, raw and after temperature scaling, and
	// their out-of-distribution detection (study.Assess).
	Assessed *study.Assessed `json:"assessed,omitempty"`
}

// WriteResult writes r as dir's ResultFile, atomically.
func WriteResult(dir string, r Result) error {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, ResultFile), err)
	}
	b = append(b, '\n')
	path := filepath.Join(dir, ResultFile)
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ReadResult reads dir's result and checks its history as the tables
// read it; ok is false when it has none.
func ReadResult(dir string) (r Result, ok bool, err error) {
	path := filepath.Join(dir, ResultFile)
	err = readJSONFile(path, &r)
	if errors.Is(err, os.ErrNotExist) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	switch {
	case r.Diverged == "" && r.Skipped == "" && len(r.History) == 0:
		return Result{}, false, fmt.Errorf("%s: no scores", path)
	case r.Skipped != "" && len(r.History) > 0:
		return Result{}, false, fmt.Errorf("%s: a skipped run with %d lines of history", path, len(r.History))
	}
	if _, err := checkHistory(r.Settings, r.History, r.Diverged != "" || r.Skipped != ""); err != nil {
		return Result{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return r, true, nil
}

// SameRun says whether a run saved with settings saved is the run asked
// for, but for its budget: the automatic repulsion weights are resolved
// by the training set's size when a run starts (Settings.Resolve), so an
// automatic weight asked for matches any saved one.
func SameRun(saved, asked experiment.Settings) bool {
	asked.Epochs = saved.Epochs
	if asked.Repulsion == experiment.AutoRepulsion {
		asked.Repulsion = saved.Repulsion
	}
	if asked.HeadRepulsion == experiment.AutoRepulsion {
		asked.HeadRepulsion = saved.HeadRepulsion
	}
	return saved.Equal(asked)
}

// OtherRun is the error for a run directory dir that holds a run saved
// with settings saved where settings asked were asked for.
func OtherRun(dir string, saved, asked experiment.Settings) error {
	return fmt.Errorf("%s holds a run with other settings, %s asked for; use another -out, or remove it", dir, jsondiff.First(saved, asked))
}

// LastTest returns the test lines of the last epoch in history.
func LastTest(history []experiment.MetricsLine) []experiment.MetricsLine {
	var out []experiment.MetricsLine
	last := 0
	for _, l := range history {
		last = max(last, l.Epoch)
	}
	for _, l := range history {
		if l.Epoch == last && l.Split == "test" {
			out = append(out, l)
		}
	}
	return out
}
