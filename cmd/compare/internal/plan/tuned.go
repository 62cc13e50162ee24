package plan

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// The tuned protocol gives every method its own best learning rate before
// the methods are compared: a search stage trains each method once per
// candidate (one seed, a short budget), chooses the candidate by its
// validation figures alone (choose), and a final stage trains each method
// at its choice for every seed and the full budget. The test split is
// never read for a choice.

// Search is a tuned comparison's search stage.
type Search struct {
	// LRs are the candidate learning rates, ascending.
	LRs []float64 `json:"lrs"`
	// Extend are rates above LRs, ascending, each tried only while the
	// method's best rate so far is the largest it tried: a choice at the
	// grid's edge says a larger rate may be better still.
	Extend []float64 `json:"extend,omitempty"`
	// ScoreScales are the candidate score scales of the kernel methods
	// that do not take MT-SGD's presets (moo-svgd, say): the score
	// scale decides their step size as much as the learning rate does.
	// MT-SGD keeps its preset's, the other methods the batch mean.
	ScoreScales []experiment.ScoreScale `json:"score_scales"`
	Epochs      int                     `json:"epochs"`
	// TrainLimit trains the search's runs on the first TrainLimit
	// training examples (0: as many as the final runs).
	TrainLimit int    `json:"train_limit,omitempty"`
	Seed       uint64 `json:"seed"`
}

// Tuned is -protocol tuned's budget: the search of 4 rates
// (and 2 score scales for MOO-SVGD) over 2 epochs on half the training
// composites, then 3 epochs and 3 seeds at the choice; planned at about
// 10 hours of a 2-core machine for the three Multi-* data sets
// (docs/results-tuned.md).
var Tuned = struct {
	Search Search
	Epochs int
	Seeds  string // as -seeds takes them
}{
	Search: Search{LRs: []float64{1e-3, 3e-3, 1e-2, 3e-2}, Extend: []float64{0.1, 0.3},
		ScoreScales: []experiment.ScoreScale{experiment.ScaleMean, experiment.ScaleNormalized}, Epochs: 2, TrainLimit: 55_000},
	Epochs: 3,
	Seeds:  "1,2,3",
}

// Candidate is one setting a search tries for a method.
type Candidate struct {
	LR float64 `json:"lr"`
	// ScoreScale is the candidate's score scale; unnamed keeps the
	// method's.
	ScoreScale experiment.ScoreScale `json:"score_scale,omitempty"`
}

func (c Candidate) String() string {
	s := "lr " + strconv.FormatFloat(c.LR, 'g', -1, 64)
	if c.ScoreScale != experiment.ScaleUnnamed {
		s += ", " + c.ScoreScale.String() + " scores"
	}
	return s
}

// dir is the candidate's part of a search run's directory name.
func (c Candidate) dir() string {
	s := "lr" + strconv.FormatFloat(c.LR, 'g', -1, 64)
	if c.ScoreScale != experiment.ScaleUnnamed {
		s += "-" + c.ScoreScale.String()
	}
	return s
}

// apply sets the candidate's learning rate and score scale in s; a new
// score scale takes its own repulsion weights (experiment.DefaultRepulsion).
func (c Candidate) apply(s *experiment.Settings) {
	s.LR = c.LR
	if c.ScoreScale != experiment.ScaleUnnamed {
		s.ScoreScale = c.ScoreScale
		s.Repulsion, s.HeadRepulsion = experiment.AutoRepulsion, experiment.AutoRepulsion
	}
}

// candidates are what the search tries for a method spec: every rate,
// and for a kernel method without MT-SGD's presets every score scale
// with every rate (level 0); then each rate of Extend with every scale,
// at levels 1, 2, …, each tried only where it extends the best so far
// (extends).
func (s Search) candidates(method string) (cs []Candidate, levels []int) {
	scales := []experiment.ScoreScale{experiment.ScaleUnnamed}
	name, _, _ := strings.Cut(method, ":")
	if m, err := experiment.LookupMethod(name); err == nil && m.Kernels && !m.Presets {
		scales = s.ScoreScales
	}
	for _, sc := range scales {
		for _, lr := range s.LRs {
			cs, levels = append(cs, Candidate{LR: lr, ScoreScale: sc}), append(levels, 0)
		}
	}
	for i, lr := range s.Extend {
		for _, sc := range scales {
			cs, levels = append(cs, Candidate{LR: lr, ScoreScale: sc}), append(levels, i+1)
		}
	}
	return cs, levels
}

// extends says whether an extension candidate c is worth trying given
// the method's finished runs below its level: only if their choice is
// the largest rate they tried, with c's score scale, and c's rate is
// larger. why says why not.
func extends(c Candidate, below []searched) (ok bool, why string) {
	best, err := choose(below)
	if err != nil {
		return false, "not tried: " + err.Error()
	}
	top := 0.0
	for _, r := range below {
		if r.Skipped == "" {
			top = max(top, r.Candidate.LR)
		}
	}
	switch {
	case best.LR < top:
		return false, fmt.Sprintf("not needed: the choice so far, %s, is inside the rates tried", best)
	case best.ScoreScale != c.ScoreScale:
		return false, fmt.Sprintf("not needed: the choice so far, %s, has the other score scale", best)
	case c.LR <= best.LR:
		return false, fmt.Sprintf("not needed: the choice so far, %s, is as large", best)
	}
	return true, ""
}

// searchDir is the run directory of a method's search candidate,
// relative to OUT.
func searchDir(method string, c Candidate) string {
	return "search/" + strings.ReplaceAll(method, ":", "-") + "-" + c.dir()
}

// searchSettings are the settings of a method's search run for c.
func (o Comparison) searchSettings(method string, c Candidate) experiment.Settings {
	s := o.Settings(method, o.Search.Seed)
	s.Epochs = o.Search.Epochs
	if o.Search.TrainLimit > 0 && (s.TrainLimit == 0 || o.Search.TrainLimit < s.TrainLimit) {
		s.TrainLimit = o.Search.TrainLimit
	}
	c.apply(&s)
	return s
}

// tieTolerance is how close two candidates' criteria must be to tie;
// the lower learning rate then wins. Validation NLLs are printed to 4
// decimals: closer than that is not a difference the tables show.
const tieTolerance = 1e-4

// searched is one finished search run as the choice sees it.
type searched struct {
	Method    string
	Candidate Candidate
	// Criterion is the mean over tasks of the validation NLL (MSE for
	// regression) after the search's last epoch; +Inf for a run that
	// diverged.
	Criterion float64
	// Valid are the last epoch's validation lines.
	Valid    []experiment.MetricsLine
	Diverged string
	// Skipped says why an extension candidate was not tried; its
	// Criterion is +Inf.
	Skipped string
	// Seconds is the run's training and evaluation time.
	Seconds float64
}

// criterion is the choice's figure of a search run: the mean over tasks
// of its last epoch's validation NLL, or MSE for regression. It reads the
// validation lines alone; a run without them cannot be searched.
func criterion(history []experiment.MetricsLine) (float64, []experiment.MetricsLine, error) {
	last := 0
	for _, l := range history {
		last = max(last, l.Epoch)
	}
	var sum float64
	var lines []experiment.MetricsLine
	for _, l := range history {
		if l.Epoch != last || l.Split != "valid" {
			continue
		}
		lines = append(lines, l)
		switch {
		case l.Regression != nil:
			sum += l.MSE
		case l.Classification != nil:
			sum += l.NLL
		}
	}
	if len(lines) == 0 {
		return 0, nil, errors.New("no validation scores: the tuned protocol needs a data set with a validation split")
	}
	return sum / float64(len(lines)), lines, nil
}

// choose picks a method's candidate from its search runs: the lowest
// criterion, the lower learning rate (then the earlier score scale) among
// those within tieTolerance of it. Runs that diverged are never chosen;
// if every run diverged there is no choice.
func choose(runs []searched) (Candidate, error) {
	best := math.Inf(1)
	for _, r := range runs {
		best = min(best, r.Criterion)
	}
	if math.IsInf(best, 1) {
		return Candidate{}, errors.New("every search run diverged")
	}
	var tied []searched
	for _, r := range runs {
		if r.Criterion <= best+tieTolerance {
			tied = append(tied, r)
		}
	}
	// runs come in the search's order: score scales in order, rates
	// ascending within each; the lowest rate, then the first scale.
	c := slices.MinFunc(tied, func(a, b searched) int {
		if a.Candidate.LR != b.Candidate.LR {
			if a.Candidate.LR < b.Candidate.LR {
				return -1
			}
			return 1
		}
		return 0
	})
	return c.Candidate, nil
}

// searchTable is the search as Markdown: per method and candidate, the
// last epoch's validation accuracy (or MSE) per task and the criterion,
// the choice marked. Test figures are not shown: they play no part.
func searchTable(methods []string, runs map[string][]searched, chosen map[string]Candidate) string {
	var b strings.Builder
	b.WriteString("| method | candidate | validation NLL (MSE), mean over tasks | validation accuracy (MSE) per task | chosen |\n|---|---|---|---|---|\n")
	for _, m := range methods {
		for _, r := range runs[m] {
			crit, per := "diverged", "—"
			if r.Skipped != "" {
				crit = r.Skipped
			}
			if r.Diverged == "" && r.Skipped == "" {
				crit = fmt.Sprintf("%.4f", r.Criterion)
				var fs []string
				for _, l := range r.Valid {
					if l.Regression != nil {
						fs = append(fs, fmt.Sprintf("%s %.4f", l.Task, l.MSE))
					} else {
						fs = append(fs, fmt.Sprintf("%s %.4f", l.Task, l.Accuracy))
					}
				}
				per = strings.Join(fs, ", ")
			}
			mark := ""
			if c, ok := chosen[m]; ok && c == r.Candidate {
				mark = "✔"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", m, r.Candidate, crit, per, mark)
		}
	}
	return b.String()
}

// SearchFile is the tuned protocol's search table in OUT, and TimeFile
// its chart of test NLL against training time.
const (
	SearchFile = "search.md"
	TimeFile   = "compare-time.png"
)

// writeSearch writes OUT/search.md: the search's rule and table.
func writeSearch(out string, p Plan, ss searchState) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: learning-rate search\n\n%s\n\n", p.Dataset, searchRule(p))
	b.WriteString(searchTable(p.Methods, ss.runs, ss.chosen))
	for _, m := range p.Methods {
		if err := ss.failed[m]; err != nil {
			fmt.Fprintf(&b, "\n%s: %v\n", m, err)
		}
		if len(ss.missing[m]) > 0 {
			fmt.Fprintf(&b, "\n%s: search cells not finished: %s\n", m, strings.Join(ss.missing[m], "; "))
		}
	}
	path := filepath.Join(out, SearchFile)
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// searchRule says in a paragraph how the plan's search chooses.
func searchRule(p Plan) string {
	s := p.Search
	var lrs []string
	for _, lr := range s.LRs {
		lrs = append(lrs, strconv.FormatFloat(lr, 'g', -1, 64))
	}
	limit := "all training examples"
	if s.TrainLimit > 0 {
		limit = fmt.Sprintf("the first %d training examples", s.TrainLimit)
	}
	var scales []string
	for _, sc := range s.ScoreScales {
		scales = append(scales, sc.String())
	}
	extend := ""
	if len(s.Extend) > 0 {
		extend = fmt.Sprintf(", then %s in turn while the best rate so far is the largest tried", strings.ReplaceAll(Rates(s.Extend), ",", ", "))
	}
	return fmt.Sprintf("Search: every method at learning rates %s%s (kernel methods without MT-SGD's presets also with score scales %s), "+
		"%d epochs on %s, seed %d. Choice: the lowest mean over tasks of the validation NLL (MSE for regression) after the last epoch; "+
		"within %g of it, the lowest rate. Diverged runs are never chosen. The test split plays no part.",
		strings.Join(lrs, ", "), extend, strings.Join(scales, ", "), s.Epochs, limit, s.Seed, tieTolerance)
}

// tunedNote is what compare.md says below a tuned comparison's table.
func tunedNote(p Plan, ss searchState, spent float64) string {
	var seeds []string
	for _, s := range p.Seeds {
		seeds = append(seeds, strconv.FormatUint(s, 10))
	}
	return fmt.Sprintf("\nEach method at its own choice (the `chosen` column; %s: %s). Final runs: %d epochs, seeds %s; mean ± sample sd over seeds, test split. "+
		"Machine time in the finished cells (training and evaluation, search included): %.1f h.\n",
		SearchFile, searchRule(p), p.Epochs, strings.Join(seeds, ", "), spent/3600)
}

// chosenLabels are the tuned plan's choices as the table prints them;
// nil for a plan without a search.
func chosenLabels(p Plan, ss searchState) map[string]string {
	if p.Search == nil {
		return nil
	}
	labels := map[string]string{}
	for m, c := range ss.chosen {
		labels[m] = c.String()
	}
	return labels
}

// SkipExtension decides an extension cell of the search (Level > 0)
// from its method's runs below its level, which must have finished: if
// it does not extend their best, it writes the cell's result as skipped,
// saying why, and returns true. Other cells are never skipped.
func SkipExtension(out string, p Plan, c Cell) (bool, error) {
	if c.Stage != StageSearch || c.Level == 0 {
		return false, nil
	}
	dir := filepath.Join(out, c.Dir)
	if res, ok, err := ReadResult(dir); err != nil || ok {
		return ok && res.Skipped != "", err // decided already
	}
	var below []searched
	var missing []string
	for _, b := range p.Cells {
		if b.Stage != StageSearch || b.Method != c.Method || b.Level >= c.Level {
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
	return true, WriteResult(dir, Result{Settings: c.Settings, Skipped: why})
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

// CellSettings are what cell c of p trains with: its own settings, or for
// a final cell of the tuned protocol those with its method's choice
// applied, which needs the method's search finished.
func CellSettings(out string, p Plan, c Cell) (experiment.Settings, error) {
	if c.Stage != StageFinal {
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
		if c.Stage != StageSearch {
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

// Rates prints learning rates as -lrs takes them: comma-separated, each
// in its shortest form.
func Rates(rates []float64) string {
	var fs []string
	for _, r := range rates {
		fs = append(fs, strconv.FormatFloat(r, 'g', -1, 64))
	}
	return strings.Join(fs, ",")
}
