package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/jsondiff"
)

// PlanFile is the name of a sweep's plan in OUT.
const PlanFile = "plan.json"

// Comparison is what a plan is made from: compare's comparison flags.
type Comparison struct {
	Dataset    string                   `json:"dataset"`
	Methods    []string                 `json:"methods"`
	Seeds      []uint64                 `json:"seeds"`
	Epochs     int                      `json:"epochs,omitempty"`    // 0: the data set's default
	LR         float64                  `json:"lr,omitempty"`        // 0: the data set's default
	Optimizer  experiment.OptimizerKind `json:"optimizer,omitempty"` // unnamed: the data set's default
	Particles  int                      `json:"particles"`
	TrainLimit int                      `json:"train_limit,omitempty"`
	TestLimit  int                      `json:"test_limit,omitempty"`
	// Search is the tuned protocol's search stage (tuned.go); nil for a
	// comparison at one learning rate.
	Search *Search `json:"search,omitempty"`
	// Runs lists a study's runs in order (study.go); nil: every method
	// for every seed. Assess: each finished run's checkpoints are
	// assessed into its result file.
	Runs   []Run `json:"runs,omitempty"`
	Assess bool  `json:"assess,omitempty"`
	// Tasks and Model replace the data set's -tasks and -model in every
	// run; "": its defaults.
	Tasks string `json:"tasks,omitempty"`
	Model string `json:"model,omitempty"`
	// Attributes: Aggregate also writes CelebA's per-attribute tables
	// and radar charts (study.WriteAttributes).
	Attributes bool `json:"attributes,omitempty"`
}

// Plan is a comparison as a list of independent cells, each one run
// (data set, method, seed and the settings they give). A cell's index is
// its place in Cells: seeds in -seeds order, and within a seed the
// methods in -methods order, the order compare runs them in one process.
// Its JSON form, OUT/plan.json, holds the comparison's fields beside the
// cells.
type Plan struct {
	Comparison
	Cells []Cell `json:"cells"`
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
	// Stage is the tuned protocol's StageSearch or StageFinal; ""
	// otherwise.
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
	StageSearch = "search"
	StageFinal  = "final"
)

// runDir is the run directory of a method and seed, relative to OUT.
func runDir(method string, seed uint64) string {
	return fmt.Sprintf("%s-seed%d", specDir.Replace(method), seed)
}

// New lists the comparison's cells.
// With a search (the tuned protocol) the search cells come first, per
// method its candidates in order, then the final cells, whose rates
// their methods' searches choose.
func New(o Comparison) Plan {
	p := Plan{Comparison: o}
	p.Search = nil // a study has none; a tuned plan gets a copy of o's below
	if o.Runs != nil {
		for _, r := range o.Runs {
			s, dir := o.Settings(r.Method, r.Seed), runDir(r.Method, r.Seed)
			if r.Tasks != "" {
				s.Tasks, dir = r.Tasks, runDir(r.Method+"-"+r.Tasks, r.Seed)
			}
			p.Cells = append(p.Cells, Cell{Index: len(p.Cells), Dataset: o.Dataset, Method: r.Method, Seed: r.Seed, Dir: dir, Settings: s})
		}
		return p
	}
	stage := ""
	if o.Search != nil {
		search := *o.Search
		p.Search, stage = &search, StageFinal
		for _, method := range o.Methods {
			cs, levels := o.Search.candidates(method)
			for i, c := range cs {
				p.Cells = append(p.Cells, Cell{Index: len(p.Cells), Dataset: o.Dataset, Method: method, Seed: o.Search.Seed,
					Dir: searchDir(method, c), Settings: o.searchSettings(method, c), Stage: StageSearch, Candidate: c, Level: levels[i]})
			}
		}
	}
	for _, seed := range o.Seeds {
		for _, method := range o.Methods {
			s := o.Settings(method, seed)
			if stage == StageFinal {
				s.LR = 0
			}
			p.Cells = append(p.Cells, Cell{Index: len(p.Cells), Dataset: o.Dataset, Method: method, Seed: seed,
				Dir: runDir(method, seed), Settings: s, Stage: stage})
		}
	}
	return p
}

// Settings are the data set's defaults for a method spec (NAME or
// NAME:PRESET) with the comparison's budget. The spec must be one
// CheckSpec accepts.
func (o Comparison) Settings(method string, seed uint64) experiment.Settings {
	spec := mustSpec(method)
	s := experiment.Defaults(o.Dataset).ForMethod(spec.Name)
	if p, err := experiment.LookupPreset(spec.Preset); err == nil && spec.Preset != "" {
		p.Apply(&s)
	}
	s.Seed, s.Particles, s.TrainLimit, s.TestLimit = seed, o.Particles, o.TrainLimit, o.TestLimit
	if o.Tasks != "" {
		s.Tasks = o.Tasks
	}
	if o.Model != "" {
		s.Model = o.Model
	}
	if o.Epochs > 0 {
		s.Epochs = o.Epochs
	}
	if o.LR > 0 {
		s.LR = o.LR
	}
	if o.Optimizer != experiment.OptimizerUnnamed {
		s.Optimizer = o.Optimizer
	}
	spec.apply(&s)
	return s
}

// Check checks the settings the comparison trains with: those of each
// method at its first seed, or with a search those of every search run.
func (o Comparison) Check() error {
	if err := o.checkDistinct(); err != nil {
		return err
	}
	if o.Search == nil {
		for _, m := range o.Methods {
			if err := o.Settings(m, o.Seeds[0]).Check(); err != nil {
				if len(o.Methods) > 1 {
					return fmt.Errorf("%s: %w", m, err)
				}
				return err
			}
		}
		return nil
	}
	for _, m := range o.Methods {
		cs, _ := o.Search.candidates(m)
		for _, c := range cs {
			if err := o.searchSettings(m, c).Check(); err != nil {
				return fmt.Errorf("%s at %s: %w", m, c, err)
			}
		}
	}
	return nil
}

// checkDistinct refuses two method specs that train the same runs under
// two names (linear@lr=0.01 and linear@lr=1e-2, a spec's @lr= at the
// comparison's own rate, the same options in another order), which
// would train them twice and count them as two methods. Without a
// search the specs' settings are compared; with one, the specs
// themselves, each option read as its value.
func (o Comparison) checkDistinct() error {
	for i, a := range o.Methods {
		for _, b := range o.Methods[:i] {
			same := o.Settings(a, 1).Equal(o.Settings(b, 1))
			if o.Search != nil {
				same = reflect.DeepEqual(mustSpec(a), mustSpec(b))
			}
			if same {
				return fmt.Errorf("-methods: %s and %s train the same runs; give one", b, a)
			}
		}
	}
	return nil
}

// Write writes OUT/plan.json unless it already holds this plan.
func Write(out string, p Plan) error {
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

// Read reads OUT/plan.json and checks that this binary derives the same
// cells from its flags.
// CheckReplace refuses to write p over a plan in out that differs from
// it other than by cells appended at its end (a protocol's new runs),
// naming the first field that differs as its flag: the finished runs of
// the plan in out would otherwise be counted, extended or replaced under
// another comparison. A plan in out that cannot be read is refused too.
func CheckReplace(out string, p Plan) error {
	path := filepath.Join(out, PlanFile)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	old, err := Read(out)
	if err != nil {
		return fmt.Errorf("%w (-replace-plan replaces it)", err)
	}
	if len(old.Cells) <= len(p.Cells) && slices.EqualFunc(old.Cells, p.Cells[:len(old.Cells)], Cell.Equal) {
		return nil
	}
	a, _ := json.Marshal(old.Comparison)
	b, _ := json.Marshal(p.Comparison)
	var was, is map[string]any
	_ = json.Unmarshal(a, &was)
	_ = json.Unmarshal(b, &is)
	keys := slices.Sorted(maps.Keys(is))
	for k := range was {
		if _, ok := is[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if !reflect.DeepEqual(was[k], is[k]) {
			return fmt.Errorf("-%s: %s holds another comparison's plan (%s %v, here %v); use another -out, or -replace-plan to replace it",
				strings.ReplaceAll(k, "_", "-"), path, k, was[k], is[k])
		}
	}
	return fmt.Errorf("%s holds a plan whose cells differ from these flags' (another version of the defaults?); use another -out, or -replace-plan to replace it", path)
}

// Read reads the plan in out.
func Read(out string) (Plan, error) {
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
	want := New(p.Comparison)
	if len(want.Cells) != len(p.Cells) {
		return Plan{}, fmt.Errorf("%s: %d cells, its flags give %d", path, len(p.Cells), len(want.Cells))
	}
	for i, c := range p.Cells {
		if !c.Equal(want.Cells[i]) {
			return Plan{}, fmt.Errorf("%s: cell %d differs from what this compare makes of the plan's flags (another version?) in %s here (run %s)",
				path, i, jsondiff.First(c, want.Cells[i]), c.Dir)
		}
	}
	return p, nil
}
