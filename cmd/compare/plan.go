package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// PlanFile is the name of a sweep's plan in OUT, and CurvesFile that of
// -aggregate's chart of the methods over the epochs.
const (
	PlanFile   = "plan.json"
	CurvesFile = "compare-curves.png"
)

// errMissing is what -aggregate returns when some cells have not
// finished (exit status 5).
var errMissing = cli.Marked("cells missing", cli.ErrIncomplete)

// Plan is a comparison as a list of independent cells, each one run
// (data set, method, seed and the settings they give). A cell's index is
// its place in Cells: seeds in -seeds order, and within a seed the
// methods in -methods order, the order compare runs them in one process.
type Plan struct {
	Dataset    string                   `json:"dataset"`
	Methods    []string                 `json:"methods"`
	Seeds      []uint64                 `json:"seeds"`
	Epochs     int                      `json:"epochs,omitempty"`
	LR         float64                  `json:"lr,omitempty"`
	Optimizer  experiment.OptimizerKind `json:"optimizer,omitempty"`
	Particles  int                      `json:"particles"`
	TrainLimit int                      `json:"train_limit,omitempty"`
	TestLimit  int                      `json:"test_limit,omitempty"`
	// Search is the tuned protocol's search stage (tuned.go); nil for a
	// comparison at one learning rate.
	Search *Search `json:"search,omitempty"`
	// Runs lists a study's runs in order (study.go); nil: every method
	// for every seed. Assess: each finished run's checkpoints are
	// assessed into its result file.
	Runs   []plannedRun `json:"runs,omitempty"`
	Assess bool         `json:"assess,omitempty"`
	Cells  []Cell       `json:"cells"`
}

// Cell is one run of a plan.
type Cell struct {
	Index   int    `json:"index"`
	Dataset string `json:"dataset"`
	Method  string `json:"method"`
	Seed    uint64 `json:"seed"`
	// Dir is the run directory, relative to OUT.
	Dir string `json:"dir"`
	// Settings are what the run trains with; a cell refuses to run when
	// the binary derives other settings from the plan's flags (another
	// version of the defaults), rather than mix runs of two versions.
	// A final cell of the tuned protocol has LR 0 here: its method's
	// search chooses the rate (and Candidate's other settings) when the
	// cell runs.
	Settings experiment.Settings `json:"settings"`
	// Stage is the tuned protocol's "search" or "final"; "" otherwise.
	Stage string `json:"stage,omitempty"`
	// Candidate is what a search cell tries, and Level its place in the
	// search: 0 the grid, n > 0 the n-th rate above it, tried only if
	// the lower levels' best is the largest rate they tried.
	Candidate Candidate `json:"candidate,omitzero"`
	Level     int       `json:"level,omitempty"`
}

// Equal reports whether c and o are the same cell.
func (c Cell) Equal(o Cell) bool {
	if !c.Settings.Equal(o.Settings) {
		return false
	}
	c.Settings, o.Settings = experiment.Settings{}, experiment.Settings{}
	return reflect.DeepEqual(c, o)
}

// The stages of the tuned protocol.
const (
	stageSearch = "search"
	stageFinal  = "final"
)

// runDir is the run directory of a method and seed, relative to OUT.
func runDir(method string, seed uint64) string {
	return fmt.Sprintf("%s-seed%d", specDir.Replace(method), seed)
}

// plan lists the comparison's cells.
// With a search (the tuned protocol) the search cells come first, per
// method its candidates in order, then the final cells, whose rates
// their methods' searches choose.
func (o Options) plan() Plan {
	p := Plan{Dataset: o.Dataset, Methods: o.Methods, Seeds: o.Seeds, Epochs: o.Epochs, LR: o.LR, Optimizer: o.Optimizer,
		Particles: o.Particles, TrainLimit: o.TrainLimit, TestLimit: o.TestLimit, Runs: o.Runs, Assess: o.Assess}
	if o.Runs != nil {
		for _, r := range o.Runs {
			p.Cells = append(p.Cells, Cell{Index: len(p.Cells), Dataset: o.Dataset, Method: r.Method, Seed: r.Seed,
				Dir: runDir(r.Method, r.Seed), Settings: o.settings(r.Method, r.Seed)})
		}
		return p
	}
	stage := ""
	if o.Search != nil {
		search := *o.Search
		p.Search, stage = &search, stageFinal
		for _, method := range o.Methods {
			cs, levels := o.Search.candidates(method)
			for i, c := range cs {
				p.Cells = append(p.Cells, Cell{Index: len(p.Cells), Dataset: o.Dataset, Method: method, Seed: o.Search.Seed,
					Dir: searchDir(method, c), Settings: o.searchSettings(method, c), Stage: stageSearch, Candidate: c, Level: levels[i]})
			}
		}
	}
	for _, seed := range o.Seeds {
		for _, method := range o.Methods {
			s := o.settings(method, seed)
			if stage == stageFinal {
				s.LR = 0
			}
			p.Cells = append(p.Cells, Cell{Index: len(p.Cells), Dataset: o.Dataset, Method: method, Seed: seed,
				Dir: runDir(method, seed), Settings: s, Stage: stage})
		}
	}
	return p
}

// options are the comparison flags a plan was made with; out, dataDir
// and workers are the machine's own.
func (p Plan) options(out, dataDir string, workers int) Options {
	return Options{Dataset: p.Dataset, Methods: p.Methods, Seeds: p.Seeds, Epochs: p.Epochs, LR: p.LR, Optimizer: p.Optimizer,
		Particles: p.Particles, TrainLimit: p.TrainLimit, TestLimit: p.TestLimit, Search: p.Search, Runs: p.Runs, Assess: p.Assess,
		Out: out, DataDir: dataDir, Workers: workers}
}

// writePlan writes OUT/plan.json unless it already holds this plan.
func writePlan(out string, p Plan) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	path := filepath.Join(out, PlanFile)
	if old, err := readBounded(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// readPlan reads OUT/plan.json and checks that this binary derives the
// same cells from its flags.
func readPlan(out string) (Plan, error) {
	path := filepath.Join(out, PlanFile)
	var p Plan
	err := readJSONFile(path, &p)
	if errors.Is(err, os.ErrNotExist) {
		return Plan{}, fmt.Errorf("%s: no plan (write one with compare -plan -out %s and the comparison's flags)", path, out)
	}
	if err != nil {
		return Plan{}, err
	}
	if !slices.Contains(experiment.Datasets(), p.Dataset) || len(p.Methods) == 0 || len(p.Seeds) == 0 {
		return Plan{}, fmt.Errorf("%s: not a plan (data set %q, %d methods, %d seeds)", path, p.Dataset, len(p.Methods), len(p.Seeds))
	}
	for _, m := range p.Methods {
		if _, err := parseSpec(m); err != nil {
			return Plan{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, r := range p.Runs {
		if _, err := parseSpec(r.Method); err != nil {
			return Plan{}, fmt.Errorf("%s: run %s seed %d: %w", path, r.Method, r.Seed, err)
		}
	}
	want := p.options(out, "", 1).plan()
	if len(want.Cells) != len(p.Cells) {
		return Plan{}, fmt.Errorf("%s: %d cells, its flags give %d", path, len(p.Cells), len(want.Cells))
	}
	for i, c := range p.Cells {
		if !c.Equal(want.Cells[i]) {
			a, _ := json.Marshal(c)
			w, _ := json.Marshal(want.Cells[i])
			return Plan{}, fmt.Errorf("%s: cell %d differs from what this compare makes of the plan's flags (another version?):\n  plan: %s\n  here: %s", path, i, a, w)
		}
	}
	return p, nil
}

// makePlan writes the plan of o into OUT, holding OUT's lock meanwhile so
// as not to replace the plan of a compare running there.
func makePlan(o Options, stdout io.Writer) (Plan, error) {
	release, err := cli.LockRun(o.Out, true)
	if err != nil {
		return Plan{}, err
	}
	defer release()
	p := o.plan()
	if err := writePlan(o.Out, p); err != nil {
		return Plan{}, err
	}
	_, err = fmt.Fprintf(stdout, "%s: %d cells (compare -cell 0..%d -out %s)\n", filepath.Join(o.Out, PlanFile), len(p.Cells), len(p.Cells)-1, o.Out)
	return p, err
}

// runCell runs cell i of the plan in OUT: trains it unless finished,
// resuming an interrupted run. It takes the run directory's lock, not
// OUT's, so that cells run at once on many machines sharing OUT. A final
// cell of the tuned protocol needs its method's search finished.
func runCell(ctx context.Context, o Options, i int) error {
	p, err := readPlan(o.Out)
	if err != nil {
		return err
	}
	if i < 0 || i >= len(p.Cells) {
		return cli.Usage(fmt.Errorf("-cell %d: the plan in %s has cells 0 to %d", i, o.Out, len(p.Cells)-1))
	}
	c := p.Cells[i]
	if skipped, err := skipExtension(o.Out, p, c); skipped || err != nil {
		if err != nil {
			return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
		}
		return nil
	}
	s, err := cellSettings(o.Out, p, c)
	if err != nil {
		return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
	}
	po := p.options(o.Out, o.DataDir, o.Workers)
	po.Device, po.device = o.Device, o.device
	var d *experiment.Data
	if _, err := runOne(ctx, po, s, c, &d); err != nil {
		return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
	}
	return nil
}

// skipExtension decides an extension cell of the search (Level > 0)
// from its method's runs below its level, which must have finished: if
// it does not extend their best, it writes the cell's result as skipped,
// saying why, and returns true. Other cells are never skipped.
func skipExtension(out string, p Plan, c Cell) (bool, error) {
	if c.Stage != stageSearch || c.Level == 0 {
		return false, nil
	}
	dir := filepath.Join(out, c.Dir)
	if res, ok, err := readResult(dir); err != nil || ok {
		return ok && res.Skipped != "", err // decided already
	}
	var below []searched
	var missing []string
	for _, b := range p.Cells {
		if b.Stage != stageSearch || b.Method != c.Method || b.Level >= c.Level {
			continue
		}
		st, err := readCell(out, b, b.Settings)
		if err != nil {
			return false, err
		}
		if !st.Done {
			missing = append(missing, fmt.Sprintf("%d %s: %s", b.Index, b.Dir, st.Why))
			continue
		}
		r, err := searchedOf(b, st)
		if err != nil {
			return false, err
		}
		below = append(below, r)
	}
	if len(missing) > 0 {
		return false, fmt.Errorf("the search of %s below this rate has not finished (cells %s): run them first", c.Method, strings.Join(missing, "; "))
	}
	ok, why := extends(c.Candidate, below)
	if ok {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	release, err := cli.LockRun(dir, true)
	if err != nil {
		return false, err
	}
	defer release()
	log.WithField("run", dir).Info(why)
	return true, writeResult(dir, runResult{Settings: c.Settings, Skipped: why})
}

// searchedOf is a finished search cell as the choice sees it.
func searchedOf(c Cell, st cellState) (searched, error) {
	r := searched{Method: c.Method, Candidate: c.Candidate, Diverged: st.Diverged, Skipped: st.Skipped, Criterion: math.Inf(1),
		Seconds: lastSeconds(st.History)}
	if st.Diverged != "" || st.Skipped != "" {
		return r, nil
	}
	var err error
	if r.Criterion, r.Valid, err = criterion(st.History); err != nil {
		return r, fmt.Errorf("cell %d: %w", c.Index, err)
	}
	return r, nil
}

// cellSettings are what cell c of p trains with: its own settings, or for
// a final cell of the tuned protocol those with its method's choice
// applied, which needs the method's search finished.
func cellSettings(out string, p Plan, c Cell) (experiment.Settings, error) {
	if c.Stage != stageFinal {
		return c.Settings, nil
	}
	ss, err := readSearch(out, p)
	if err != nil {
		return experiment.Settings{}, err
	}
	cand, ok := ss.chosen[c.Method]
	switch {
	case ok:
	case ss.failed[c.Method] != nil:
		return experiment.Settings{}, fmt.Errorf("no rate to train %s at: %w", c.Method, ss.failed[c.Method])
	default:
		return experiment.Settings{}, fmt.Errorf("the search of %s has not finished (cells %s): run them first",
			c.Method, strings.Join(ss.missing[c.Method], "; "))
	}
	s := c.Settings
	cand.apply(&s)
	return s, nil
}

// searchState is how far a plan's search has got.
type searchState struct {
	runs    map[string][]searched // method → its finished search runs, in the plan's order
	chosen  map[string]Candidate  // method → its choice, once its search has finished
	failed  map[string]error      // method → why its finished search chose nothing
	missing map[string][]string   // method → its unfinished search cells, "I DIR: why"
	pending map[int]string        // an unfinished search cell's index → "I DIR: why"
}

// readSearch reads the search cells of p in OUT and makes the choice of
// every method whose search has finished. It reads validation scores
// alone (criterion).
func readSearch(out string, p Plan) (searchState, error) {
	ss := searchState{runs: map[string][]searched{}, chosen: map[string]Candidate{},
		failed: map[string]error{}, missing: map[string][]string{}, pending: map[int]string{}}
	for _, c := range p.Cells {
		if c.Stage != stageSearch {
			continue
		}
		st, err := readCell(out, c, c.Settings)
		if err != nil {
			return ss, fmt.Errorf("cell %d: %w", c.Index, err)
		}
		if !st.Done {
			why := fmt.Sprintf("%d %s: %s", c.Index, c.Dir, st.Why)
			ss.missing[c.Method] = append(ss.missing[c.Method], why)
			ss.pending[c.Index] = why
			continue
		}
		r, err := searchedOf(c, st)
		if err != nil {
			return ss, err
		}
		ss.runs[c.Method] = append(ss.runs[c.Method], r)
	}
	for _, m := range p.Methods {
		if len(ss.missing[m]) > 0 || len(ss.runs[m]) == 0 {
			continue
		}
		c, err := choose(ss.runs[m])
		if err != nil {
			ss.failed[m] = err
			continue
		}
		ss.chosen[m] = c
	}
	return ss, nil
}

// cellState is how far a cell has got, as -aggregate finds it.
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
	if res, ok, err := readResult(dir); err == nil && ok && sameRun(res.Settings, asked) && res.Settings.Epochs == asked.Epochs {
		return cellState{Done: true, Lines: lastTest(res.History), History: res.History, Diverged: res.Diverged, Skipped: res.Skipped,
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
	res, ok, err := readResult(dir)
	if err != nil {
		return cellState{}, err
	}
	if ok {
		if !sameRun(res.Settings, asked) {
			return cellState{}, otherRun(dir, res.Settings, asked)
		}
		if res.Settings.Epochs == asked.Epochs {
			return cellState{Done: true, Lines: lastTest(res.History), History: res.History, Diverged: res.Diverged, Skipped: res.Skipped,
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
	if !sameRun(saved, asked) {
		return cellState{}, otherRun(dir, saved, asked)
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
	return cellState{Done: true, Lines: lastTest(state.History), History: state.History}, nil
}

// aggregate writes the tables of the plan in OUT from its finished cells
// (and for the tuned protocol the search's table, OUT/search.md, and the
// chart of test NLL against time, OUT/compare-time.png). When some have
// not finished it still writes them, from the cells that have, lists the
// missing ones on stdout and in compare.md, and returns an error
// wrapping errMissing.
func aggregate(o Options, stdout io.Writer) error {
	release, err := cli.LockRun(o.Out, true)
	if err != nil {
		return err
	}
	defer release()
	p, err := readPlan(o.Out)
	if err != nil {
		return err
	}
	if err := checkResults(o.Out, p); err != nil {
		return err
	}
	var ss searchState
	if p.Search != nil {
		if ss, err = readSearch(o.Out, p); err != nil {
			return err
		}
		if err := writeSearch(o.Out, p, ss); err != nil {
			return err
		}
	}
	c, err := collect(o.Out, p, ss)
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
			len(c.missing), len(p.Cells), strings.Join(c.indices, ","), filepath.Join(o.Out, SbatchFile), strings.Join(c.missing, "\n- "))
	}
	if err := study.WriteComparison(o.Out, study.Comparison{Dataset: p.Dataset, Methods: p.Methods, Chosen: chosenLabels(p, ss)}, c.results, note, stdout); err != nil {
		return err
	}
	if p.Assess {
		var left string // the study's missing cells, without this machine's paths
		if len(c.missing) > 0 {
			left = fmt.Sprintf("\nRuns still to finish, %d of %d:\n\n- %s\n", len(c.missing), len(p.Cells), strings.Join(c.missing, "\n- "))
		}
		if err := writeStudy(o.Out, p, c.studied, c.histories, left); err != nil {
			return err
		}
	}
	if err := writeCurves(o.Out, p, c.histories); err != nil {
		return err
	}
	if len(c.missing) > 0 {
		return fmt.Errorf("%w: %d of %d (cells %s)", errMissing, len(c.missing), len(p.Cells), strings.Join(c.indices, ","))
	}
	return nil
}

// collected is what aggregate read of a plan's cells: the finished runs
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
		if cell.Stage == stageSearch {
			if why, ok := ss.pending[cell.Index]; ok {
				c.missing = append(c.missing, why)
				c.indices = append(c.indices, strconv.Itoa(cell.Index))
			}
			continue
		}
		asked := cell.Settings
		if cell.Stage == stageFinal {
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
