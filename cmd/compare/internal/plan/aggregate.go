package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// CurvesFile is Aggregate's chart of the methods over the epochs in OUT,
// and SbatchFile the Slurm job array over a plan's cells that compare
// -slurm writes there, which Aggregate's list of missing cells names.
const (
	CurvesFile = "compare-curves.png"
	SbatchFile = "sweep.sbatch"
)

// ErrMissing is what Aggregate returns when some cells have not
// finished (exit status 5).
var ErrMissing = cli.Marked("cells missing", cli.ErrIncomplete)

// Aggregate writes the tables of the plan in OUT from its finished cells
// (and for the tuned protocol the search's table, OUT/search.md, and the
// chart of test NLL against time, OUT/compare-time.png), printing the
// summary to stdout. It checks every result file first, and writes
// nothing when one is not what a run writes. When some cells have not
// finished it still writes them, from the cells that have, lists the
// missing ones on stdout and in compare.md, and returns an error
// wrapping ErrMissing.
func Aggregate(out string, stdout io.Writer) error {
	release, err := cli.LockRun(out, true)
	if err != nil {
		return err
	}
	defer release()
	p, err := Read(out)
	if err != nil {
		return err
	}
	if err := checkResults(out, p); err != nil {
		return err
	}
	var ss searchState
	if p.Search != nil {
		if ss, err = readSearch(out, p); err != nil {
			return err
		}
		if err := writeSearch(out, p, ss); err != nil {
			return err
		}
	}
	c, err := collect(out, p, ss)
	if err != nil {
		return err
	}
	var note string
	if p.Search != nil {
		note = tunedNote(p, ss, c.spent)
	}
	if len(c.diverged) > 0 {
		note += fmt.Sprintf("\nDiverged final runs, left out of the table:\n\n- %s\n", strings.Join(c.diverged, "\n- "))
	}
	if len(c.missing) > 0 {
		note += fmt.Sprintf("\nMissing cells, %d of %d (rerun them with compare -cell I, or sbatch --array=%s %s):\n\n- %s\n",
			len(c.missing), len(p.Cells), strings.Join(c.indices, ","), filepath.Join(out, SbatchFile), strings.Join(c.missing, "\n- "))
	}
	shown := p // the tables' methods: single@task=J's runs folded into one
	shown.Methods = foldSingleTask(p.Methods, c.results, c.histories)
	if err := study.WriteComparison(out, study.Comparison{Dataset: p.Dataset, Methods: shown.Methods, Chosen: chosenLabels(p, ss)}, c.results, note, stdout); err != nil {
		return err
	}
	if p.Attributes {
		if err := study.WriteAttributes(out, shown.Methods, c.results); err != nil {
			return err
		}
	}
	if p.Assess {
		var left string // the study's missing cells, without this machine's paths
		if len(c.missing) > 0 {
			left = fmt.Sprintf("\nRuns still to finish, %d of %d:\n\n- %s\n", len(c.missing), len(p.Cells), strings.Join(c.missing, "\n- "))
		}
		if err := writeStudy(out, p, c.studied, c.histories, left); err != nil {
			return err
		}
	}
	if err := writeCurves(out, shown, c.histories); err != nil {
		return err
	}
	if len(c.missing) > 0 {
		return fmt.Errorf("%w: %d of %d (cells %s)", ErrMissing, len(c.missing), len(p.Cells), strings.Join(c.indices, ","))
	}
	return nil
}

// collected is what Aggregate read of a plan's cells: the finished runs
// per method, and what is missing or diverged.
type collected struct {
	results   map[string][][]experiment.MetricsLine // per method, each run's assessed lines
	histories map[string][][]experiment.MetricsLine // per method, each run's per-epoch history
	studied   map[string][]study.Run
	missing   []string // "INDEX DIR: why", per cell not finished
	indices   []string // the missing cells' indices
	diverged  []string // "DIR: why", per final run that diverged
	spent     float64  // seconds of training and evaluation in the finished cells
}

// collect reads every cell of plan p in dir: the search's from ss, the
// others' from their run directories (a final run with the settings the
// search chose for its method).
func collect(dir string, p Plan, ss searchState) (collected, error) {
	c := collected{results: map[string][][]experiment.MetricsLine{}, histories: map[string][][]experiment.MetricsLine{}, studied: map[string][]study.Run{}}
	for _, runs := range ss.runs {
		for _, r := range runs {
			c.spent += r.Seconds
		}
	}
	notDone := func(cell Cell, why string) {
		c.missing = append(c.missing, fmt.Sprintf("%d %s: %s", cell.Index, cell.Dir, why))
		c.indices = append(c.indices, strconv.Itoa(cell.Index))
	}
	for _, cell := range p.Cells {
		if cell.Stage == StageSearch {
			if why, ok := ss.pending[cell.Index]; ok {
				c.missing = append(c.missing, why)
				c.indices = append(c.indices, strconv.Itoa(cell.Index))
			}
			continue
		}
		asked := cell.Settings
		if cell.Stage == StageFinal {
			cand, ok := ss.chosen[cell.Method]
			if !ok {
				notDone(cell, "waiting for the search of "+cell.Method)
				continue
			}
			cand.apply(&asked)
		}
		st, err := readCell(dir, cell, asked)
		if err != nil {
			return c, fmt.Errorf("cell %d: %w", cell.Index, err)
		}
		if !st.Done {
			notDone(cell, st.Why)
			continue
		}
		if p.Assess && st.Diverged == "" && st.Assessed == nil {
			// Its tables would count it nowhere: a finished run of a
			// study counts once its checkpoints are assessed.
			notDone(cell, "finished but not assessed (compare -cell assesses it)")
			continue
		}
		c.spent += lastSeconds(st.History)
		if st.Diverged != "" {
			c.diverged = append(c.diverged, fmt.Sprintf("%s: %s", cell.Dir, st.Diverged))
			continue
		}
		c.results[cell.Method] = append(c.results[cell.Method], st.Lines)
		c.histories[cell.Method] = append(c.histories[cell.Method], st.History)
		c.studied[cell.Method] = append(c.studied[cell.Method], study.Run{History: st.History, Assessed: st.Assessed})
	}
	return c, nil
}

// writeCurves draws the methods' curves against epoch from their
// histories, and for a tuned plan against time too.
func writeCurves(dir string, p Plan, histories map[string][][]experiment.MetricsLine) error {
	if len(histories) == 0 {
		return nil
	}
	type drawing func(w io.Writer, dataset string, methods []string, histories map[string][][]experiment.MetricsLine) error
	write := func(name string, draw drawing) error {
		path := filepath.Join(dir, name)
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return draw(w, p.Dataset, p.Methods, histories) }); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}
	if err := write(CurvesFile, curves.Methods); err != nil {
		return err
	}
	if p.Search == nil {
		return nil
	}
	return write(TimeFile, curves.OverTime)
}

// lastSeconds is the training and evaluation time a run's history
// records: that of its last line.
func lastSeconds(history []experiment.MetricsLine) float64 {
	if len(history) == 0 {
		return 0
	}
	return history[len(history)-1].Seconds
}

// cellState is how far a cell has got, as Aggregate finds it.
type cellState struct {
	Done     bool
	Lines    []experiment.MetricsLine // the last epoch's test lines when Done
	History  []experiment.MetricsLine // every epoch's lines when Done
	Diverged string                   // when Done: why the run stopped early
	Skipped  string                   // when Done: why an extension of the search was not tried
	Assessed *study.Assessed          // when Done: a study's assessment, if made
	Why      string                   // why not done: not started, running, epoch e of n
}

// readCell finds how far cell c in OUT, asked to train with settings
// asked, has got without training or loading data: from its result file
// if it has one, else from its checkpoint. A run directory locked by
// another process, without a finished result, is running.
func readCell(out string, c Cell, asked experiment.Settings) (cellState, error) {
	dir := filepath.Join(out, c.Dir)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return cellState{Why: "not started"}, nil
	}
	// A finished run's result file is read without its lock: it is
	// replaced atomically, and cells reading the same search's results
	// at once (a job array's final runs) must not find each other
	// "running".
	if res, ok, err := ReadResult(dir); err == nil && ok && SameRun(res.Settings, asked) && res.Settings.Epochs == asked.Epochs {
		return cellState{Done: true, Lines: LastTest(res.History), History: res.History, Diverged: res.Diverged, Skipped: res.Skipped,
			Assessed: res.Assessed}, nil
	}
	l, err := runlock.Acquire(dir)
	if errors.Is(err, runlock.ErrHeld) {
		return cellState{Why: "running (" + err.Error() + ")"}, nil
	}
	if err != nil {
		return cellState{}, err
	}
	defer l.Release()
	res, ok, err := ReadResult(dir)
	if err != nil {
		return cellState{}, err
	}
	if ok {
		if !SameRun(res.Settings, asked) {
			return cellState{}, OtherRun(dir, res.Settings, asked)
		}
		if res.Settings.Epochs == asked.Epochs {
			return cellState{Done: true, Lines: LastTest(res.History), History: res.History, Diverged: res.Diverged, Skipped: res.Skipped,
				Assessed: res.Assessed}, nil
		}
	}
	ck, err := checkpoints.Load(filepath.Join(dir, "last"))
	if errors.Is(err, os.ErrNotExist) {
		return cellState{Why: "not started"}, nil
	}
	if err != nil {
		return cellState{}, err
	}
	saved, err := experiment.ReadSettings(ck)
	if err != nil {
		return cellState{}, err
	}
	if !SameRun(saved, asked) {
		return cellState{}, OtherRun(dir, saved, asked)
	}
	if ck.Epoch < asked.Epochs || ck.Batch != 0 {
		return cellState{Why: fmt.Sprintf("interrupted in epoch %d of %d", ck.Epoch+1, asked.Epochs)}, nil
	}
	var state struct{ History []experiment.MetricsLine }
	if err := json.Unmarshal(ck.Metrics, &state); err != nil {
		return cellState{}, fmt.Errorf("%s: %w", filepath.Join(dir, "last"), err)
	}
	saved.Epochs = ck.Epoch
	if _, err := checkHistory(saved, state.History, false); err != nil {
		return cellState{}, fmt.Errorf("%s: %w", filepath.Join(dir, "last"), err)
	}
	return cellState{Done: true, Lines: LastTest(state.History), History: state.History}, nil
}
