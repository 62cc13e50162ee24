package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/curves"
	"github.com/mtsgd/mtsgd/internal/runlock"
)

// PlanFile is the name of a sweep's plan in OUT, and CurvesFile that of
// -aggregate's chart of the methods over the epochs.
const (
	PlanFile   = "plan.json"
	CurvesFile = "compare-curves.png"
)

// errMissing is what -aggregate returns when some cells have not
// finished (exit status 5).
var errMissing = errors.New("cells missing")

// Plan is a comparison as a list of independent cells, each one run
// (data set, method, seed and the settings they give). A cell's index is
// its place in Cells: seeds in -seeds order, and within a seed the
// methods in -methods order, the order compare runs them in one process.
type Plan struct {
	Dataset    string   `json:"dataset"`
	Methods    []string `json:"methods"`
	Seeds      []uint64 `json:"seeds"`
	Epochs     int      `json:"epochs,omitempty"`
	LR         float64  `json:"lr,omitempty"`
	Particles  int      `json:"particles"`
	TrainLimit int      `json:"train_limit,omitempty"`
	TestLimit  int      `json:"test_limit,omitempty"`
	Cells      []Cell   `json:"cells"`
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
	Settings experiment.Settings `json:"settings"`
}

// runDir is the run directory of a method and seed, relative to OUT.
func runDir(method string, seed uint64) string {
	return fmt.Sprintf("%s-seed%d", strings.ReplaceAll(method, ":", "-"), seed)
}

// plan lists the comparison's cells.
func (o Options) plan() Plan {
	p := Plan{Dataset: o.Dataset, Methods: o.Methods, Seeds: o.Seeds, Epochs: o.Epochs, LR: o.LR,
		Particles: o.Particles, TrainLimit: o.TrainLimit, TestLimit: o.TestLimit}
	for _, seed := range o.Seeds {
		for _, method := range o.Methods {
			p.Cells = append(p.Cells, Cell{Index: len(p.Cells), Dataset: o.Dataset, Method: method, Seed: seed,
				Dir: runDir(method, seed), Settings: o.settings(method, seed)})
		}
	}
	return p
}

// options are the comparison flags a plan was made with; out, dataDir
// and workers are the machine's own.
func (p Plan) options(out, dataDir string, workers int) Options {
	return Options{Dataset: p.Dataset, Methods: p.Methods, Seeds: p.Seeds, Epochs: p.Epochs, LR: p.LR,
		Particles: p.Particles, TrainLimit: p.TrainLimit, TestLimit: p.TestLimit,
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
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
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
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Plan{}, fmt.Errorf("%s: no plan (write one with compare -plan -out %s and the comparison's flags)", path, out)
	}
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	if !slices.Contains(experiment.Datasets(), p.Dataset) || len(p.Methods) == 0 || len(p.Seeds) == 0 {
		return Plan{}, fmt.Errorf("%s: not a plan (data set %q, %d methods, %d seeds)", path, p.Dataset, len(p.Methods), len(p.Seeds))
	}
	want := p.options(out, "", 1).plan()
	if len(want.Cells) != len(p.Cells) {
		return Plan{}, fmt.Errorf("%s: %d cells, its flags give %d", path, len(p.Cells), len(want.Cells))
	}
	for i, c := range p.Cells {
		if c != want.Cells[i] {
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
	release, err := lock(o.Out)
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
// OUT's, so that cells run at once on many machines sharing OUT.
func runCell(ctx context.Context, o Options, i int) error {
	p, err := readPlan(o.Out)
	if err != nil {
		return err
	}
	if i < 0 || i >= len(p.Cells) {
		return fmt.Errorf("-cell %d: the plan in %s has cells 0 to %d", i, o.Out, len(p.Cells)-1)
	}
	c := p.Cells[i]
	po := p.options(o.Out, o.DataDir, o.Workers)
	po.Device, po.device = o.Device, o.device
	var d *experiment.Data
	if _, err := runOne(ctx, po, c.Method, c.Seed, &d); err != nil {
		return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
	}
	return nil
}

// cellState is how far a cell has got, as -aggregate finds it.
type cellState struct {
	Done    bool
	Lines   []experiment.MetricsLine // the last epoch's test lines when Done
	History []experiment.MetricsLine // every epoch's lines when Done
	Why     string                   // why not done: not started, running, epoch e of n
}

// readCell finds how far cell c in OUT has got without training or
// loading data. A run directory locked by another process is running.
func readCell(out string, c Cell) (cellState, error) {
	dir := filepath.Join(out, c.Dir)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return cellState{Why: "not started"}, nil
	}
	l, err := runlock.Acquire(dir)
	if errors.Is(err, runlock.ErrHeld) {
		return cellState{Why: "running (" + err.Error() + ")"}, nil
	}
	if err != nil {
		return cellState{}, err
	}
	defer l.Release()
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
	asked := c.Settings
	asked.Epochs = saved.Epochs
	// The run resolved the automatic repulsions by its training set's
	// size, which only loading the data would tell; training the cell
	// checks them.
	if asked.Repulsion == experiment.AutoRepulsion {
		asked.Repulsion = saved.Repulsion
	}
	if asked.HeadRepulsion == experiment.AutoRepulsion {
		asked.HeadRepulsion = saved.HeadRepulsion
	}
	if saved != asked {
		a, _ := json.Marshal(saved)
		b, _ := json.Marshal(c.Settings)
		return cellState{}, fmt.Errorf("%s holds a run with other settings than cell %d:\n  there: %s\n  plan:  %s", dir, c.Index, a, b)
	}
	if ck.Epoch < c.Settings.Epochs || ck.Batch != 0 {
		return cellState{Why: fmt.Sprintf("interrupted in epoch %d of %d", ck.Epoch+1, c.Settings.Epochs)}, nil
	}
	var state struct{ History []experiment.MetricsLine }
	if err := json.Unmarshal(ck.Metrics, &state); err != nil {
		return cellState{}, fmt.Errorf("%s: %w", filepath.Join(dir, "last"), err)
	}
	return cellState{Done: true, Lines: lastTest(state.History), History: state.History}, nil
}

// aggregate writes the tables of the plan in OUT from its finished cells.
// When some have not finished it still writes them, from the cells that
// have, lists the missing ones on stdout and in compare.md, and returns
// an error wrapping errMissing.
func aggregate(o Options, stdout io.Writer) error {
	release, err := lock(o.Out)
	if err != nil {
		return err
	}
	defer release()
	p, err := readPlan(o.Out)
	if err != nil {
		return err
	}
	results := map[string][][]experiment.MetricsLine{}
	histories := map[string][][]experiment.MetricsLine{}
	var missing []string
	var indices []string
	for _, c := range p.Cells {
		st, err := readCell(o.Out, c)
		if err != nil {
			return fmt.Errorf("cell %d: %w", c.Index, err)
		}
		if !st.Done {
			missing = append(missing, fmt.Sprintf("%d %s: %s", c.Index, c.Dir, st.Why))
			indices = append(indices, strconv.Itoa(c.Index))
			continue
		}
		results[c.Method] = append(results[c.Method], st.Lines)
		histories[c.Method] = append(histories[c.Method], st.History)
	}
	var note string
	if len(missing) > 0 {
		note = fmt.Sprintf("\nMissing cells, %d of %d (rerun them with compare -cell I, or sbatch --array=%s %s):\n\n- %s\n",
			len(missing), len(p.Cells), strings.Join(indices, ","), filepath.Join(o.Out, SbatchFile), strings.Join(missing, "\n- "))
	}
	if err := writeTables(p.options(o.Out, "", 1), results, note, stdout); err != nil {
		return err
	}
	if len(histories) > 0 {
		path := filepath.Join(o.Out, CurvesFile)
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return curves.Methods(w, p.Dataset, p.Methods, histories) }); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %d of %d (cells %s)", errMissing, len(missing), len(p.Cells), strings.Join(indices, ","))
	}
	return nil
}
