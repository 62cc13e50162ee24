package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/metrics"
)

// maxJSONFile bounds what compare reads of a plan or a result file. A
// result file of the paper's budget is under a megabyte; one of CelebA's
// 40 tasks over 100 epochs a few tens. Anything larger is not one, and
// reading it whole (a link to /dev/zero, say) would exhaust memory.
const maxJSONFile = 64 << 20

// readJSONFile decodes the JSON value in path into v, refusing what
// cannot be a file compare wrote: a file that is not regular (a FIFO
// would block the open, a device never ends), one over maxJSONFile, a
// field v does not have, or anything after the value. A missing file is
// an error wrapping os.ErrNotExist.
func readJSONFile(path string, v any) error {
	b, err := readBounded(path)
	if err != nil {
		return err
	}
	return decodeStrict(path, b, v)
}

// readBounded reads path through regfile, at most maxJSONFile bytes.
func readBounded(path string) ([]byte, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > maxJSONFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d compare reads", path, st.Size(), maxJSONFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxJSONFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > maxJSONFile {
		return nil, fmt.Errorf("%s: more than the %d bytes compare reads", path, maxJSONFile)
	}
	return b, nil
}

// decodeStrict decodes b, the contents of path, into v: one JSON value
// with no field v lacks and nothing after it.
func decodeStrict(path string, b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: more after the JSON value (offset %d)", path, dec.InputOffset())
	}
	return nil
}

// slack is how far past its bounds a score may be and still be taken
// for rounding: a mean of −log p with p rounded to 1 may come out at
// −1e−16.
const slack = 1e-9

// taskKind is a task's name and whether it is a regression.
type taskKind struct {
	Name       string
	Regression bool
}

// checkHistory checks the history of a run with settings s as the
// tables read it: per epoch from 1 up, the validation lines (where the
// run has a validation split) then the test lines, each one line per
// task in the same order, every score in its range, and the time
// recorded never decreasing. A run that stopped early (diverged or
// skipped) may end before s.Epochs, even at none; any other must reach
// it. It returns the run's tasks.
func checkHistory(s experiment.Settings, h []experiment.MetricsLine, stopped bool) ([]taskKind, error) {
	var tasks []taskKind
	for _, l := range h {
		if l.Epoch != 1 || l.Split != "test" {
			continue
		}
		t := taskKind{Name: l.Task, Regression: l.Regression != nil}
		if l.Task == "" || slices.ContainsFunc(tasks, func(o taskKind) bool { return o.Name == t.Name }) {
			return nil, fmt.Errorf("epoch 1: test task %q empty or repeated", l.Task)
		}
		tasks = append(tasks, t)
	}
	if len(h) > 0 && len(tasks) == 0 {
		return nil, errors.New("no test line in epoch 1")
	}
	valid := s.Valid > 0 || (len(h) > 0 && h[0].Split == "valid")
	perEpoch := len(tasks)
	if valid {
		perEpoch *= 2
	}
	seconds := 0.0
	for i, l := range h {
		epoch := 1 + i/perEpoch
		at := i % perEpoch
		split, task := "test", tasks[at%len(tasks)]
		if valid && at < len(tasks) {
			split = "valid"
		}
		where := fmt.Sprintf("history line %d (epoch %d)", i+1, l.Epoch)
		switch {
		case l.Epoch != epoch:
			return nil, fmt.Errorf("%s: want epoch %d's %s line of task %q", where, epoch, split, task.Name)
		case l.Split != split || l.Task != task.Name:
			return nil, fmt.Errorf("%s: %s line of task %q where the %s line of task %q belongs", where, l.Split, l.Task, split, task.Name)
		case (l.Regression != nil) != task.Regression:
			return nil, fmt.Errorf("%s: task %q scored as another kind than in epoch 1", where, l.Task)
		case math.IsNaN(l.Seconds) || math.IsInf(l.Seconds, 0) || l.Seconds < seconds:
			return nil, fmt.Errorf("%s: seconds %g, want a finite figure no less than %g", where, l.Seconds, seconds)
		}
		seconds = l.Seconds
		if err := checkScore(l.Score); err != nil {
			return nil, fmt.Errorf("%s, %s %s: %w", where, l.Split, l.Task, err)
		}
		for p, ps := range l.Particles {
			if (ps.Regression != nil) != task.Regression {
				return nil, fmt.Errorf("%s, %s %s: particle %d scored as another kind", where, l.Split, l.Task, p)
			}
			if err := checkScore(ps); err != nil {
				return nil, fmt.Errorf("%s, %s %s: particle %d: %w", where, l.Split, l.Task, p, err)
			}
		}
	}
	epochs := 0
	if len(h) > 0 {
		if len(h)%perEpoch != 0 {
			return nil, fmt.Errorf("epoch %d has %d of its %d lines", h[len(h)-1].Epoch, len(h)%perEpoch, perEpoch)
		}
		epochs = len(h) / perEpoch
	}
	switch {
	case epochs > s.Epochs:
		return nil, fmt.Errorf("%d epochs of history, the settings train %d", epochs, s.Epochs)
	case epochs < s.Epochs && !stopped:
		return nil, fmt.Errorf("the history stops at epoch %d of %d", epochs, s.Epochs)
	}
	return tasks, nil
}

// checkScore checks that a score is one kind, and its figures in their
// ranges: accuracy, ECE and confidence in [0, 1], Brier in [0, 2], NLL
// and MSE non-negative, all finite.
func checkScore(s metrics.Score) error {
	in := func(name string, v, lo, hi float64) error {
		if math.IsNaN(v) || v < lo-slack || v > hi+slack {
			return fmt.Errorf("%s %g outside [%g, %g]", name, v, lo, hi)
		}
		return nil
	}
	switch {
	case s.Classification != nil && s.Regression != nil:
		return errors.New("both classification and regression scores")
	case s.Regression != nil:
		return in("MSE", s.MSE, 0, math.MaxFloat64)
	case s.Classification == nil:
		return errors.New("no scores")
	}
	c := s.Classification
	return errors.Join(in("accuracy", c.Accuracy, 0, 1), in("ECE", c.ECE, 0, 1), in("confidence", c.Confidence, 0, 1),
		in("Brier", c.Brier, 0, 2), in("NLL", c.NLL, 0, math.MaxFloat64))
}

// checkResults checks, before Aggregate writes anything, every result
// file of plan p in OUT: each as checkHistory and ReadResult check it,
// a run skipped only where the search skips (a cell above the grid), a
// run diverged only under the tuned protocol, and every run with the
// tasks of the others that asked for the same ones (-tasks; a
// single-task run asks for its one), in the same order, and a study's
// assessments as checkAssessment checks them. Cells without a result
// file are left to readCell.
func checkResults(out string, p Plan) error {
	type group struct {
		tasks []taskKind
		first int // the index of the group's first cell
	}
	groups := map[string]*group{} // by the tasks the cells ask for
	for _, c := range p.Cells {
		dir := filepath.Join(out, c.Dir)
		name := fmt.Sprintf("cell %d (%s)", c.Index, c.Dir)
		res, ok, err := ReadResult(dir)
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		case !ok:
			continue
		case res.Skipped != "" && (c.Stage != StageSearch || c.Level == 0):
			return fmt.Errorf("%s: %s marks the run skipped, which only a search cell above the grid can be", name, filepath.Join(dir, ResultFile))
		case res.Diverged != "" && c.Stage == "":
			return fmt.Errorf("%s: %s marks the run diverged, which only the tuned protocol records", name, filepath.Join(dir, ResultFile))
		case len(res.History) == 0:
			continue
		}
		got, err := checkHistory(res.Settings, res.History, res.Diverged != "")
		if err != nil {
			return fmt.Errorf("%s: %s: %w", name, filepath.Join(dir, ResultFile), err)
		}
		if p.Assess && res.Assessed != nil {
			epochs := res.History[len(res.History)-1].Epoch
			if err := checkAssessment(res.Assessed, res.History, got, epochs, study.OODDataset(p.Dataset)); err != nil {
				return fmt.Errorf("%s: %s: %w", name, filepath.Join(dir, ResultFile), err)
			}
		}
		g, ok := groups[c.Settings.Tasks]
		if !ok {
			groups[c.Settings.Tasks] = &group{got, c.Index}
			continue
		}
		if !slices.Equal(got, g.tasks) {
			return fmt.Errorf("%s: %s: tasks %s, cell %d's are %s", name, filepath.Join(dir, ResultFile), taskList(got), g.first, taskList(g.tasks))
		}
	}
	return nil
}

// taskList names tasks in order.
func taskList(tasks []taskKind) string {
	var names []string
	for _, t := range tasks {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}
