package study

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/metrics"
)

// A study's files in OUT: File its tables, ReadmeFile the few of them
// that the READMEs show, CalibrationChart its chart of test ECE and NLL
// per epoch, OODChart its chart of AUROC.
const (
	File             = "study.md"
	ReadmeFile       = "study-readme.md"
	CalibrationChart = "study-calibration.png"
	OODChart         = "study-ood.png"
)

// Assessed are a finished run's checkpoints as a study scores them
// (experiment.Run.Assess), as its result file holds them.
type Assessed struct {
	Last experiment.Assessment  `json:"last"`
	Best *experiment.Assessment `json:"best,omitempty"`
	// BestEpoch is the epoch best/ holds, chosen on the validation split.
	BestEpoch int `json:"best_epoch,omitempty"`
}

// Assess scores the finished run in dir, of data set dataset: its
// checkpoints last/ and best/ on the test split, raw and after
// temperature scaling, and against OODDataset's test inputs
// (experiment.Run.Assess), with the data in dataDir, components c and
// workers.
func Assess(ctx context.Context, dir, dataset, dataDir string, c experiment.Components, workers int) (*Assessed, error) {
	var a Assessed
	for _, name := range []string{"last", "best"} {
		ckDir := filepath.Join(dir, name)
		r, _, err := experiment.OpenWith(ckDir, dataDir, c, workers)
		if err != nil {
			return nil, fmt.Errorf("assessing %s: %w", ckDir, err)
		}
		log.WithFields(log.Fields{"checkpoint": ckDir, "epoch": r.Epoch(), "ood": OODDataset(dataset)}).Info("assessing")
		got, err := r.Assess(ctx, dataDir, OODDataset(dataset))
		// The checkpoint is only read: failing to free its device
		// memory loses nothing but that memory.
		if cerr := r.Close(); cerr != nil {
			log.WithField("run", ckDir).Warnf("freeing the run's device memory: %v", cerr)
		}
		if err != nil {
			return nil, fmt.Errorf("assessing %s: %w", ckDir, err)
		}
		if name == "last" {
			a.Last = got
		} else {
			a.Best, a.BestEpoch = &got, got.Epoch
		}
	}
	return &a, nil
}

// OODDataset is the data set whose test inputs a study's assessment
// scores as out of distribution for dataset: the other of the two
// Multi-* sets of one source (digits against clothes); "" for none.
func OODDataset(dataset string) string {
	return map[string]string{"multi-mnist": "multi-fashion", "multi-fashion": "multi-mnist"}[dataset]
}

// Run is a finished run of a study as its tables read it.
type Run struct {
	History  []experiment.MetricsLine
	Assessed *Assessed
}

// Method is one method spec of a study, as its tables group and name it.
type Method struct {
	// Spec is the method spec (cmd/compare's NAME[:PRESET][@…]), the
	// method's name in study.md.
	Spec string
	// Name is the registered method it trains, Preset its preset.
	Name, Preset string
	// LR is the spec's own learning rate; 0: the study's.
	LR float64
}

// Study is what a study's tables say of it.
type Study struct {
	Dataset string
	Epochs  int
	// LR is the learning rate of the methods without their own.
	LR      float64
	Methods []Method
}

// specs are the study's method specs, in order.
func (s Study) specs() []string {
	var out []string
	for _, m := range s.Methods {
		out = append(out, m.Spec)
	}
	return out
}

// WriteStudy writes into dir the study's tables (File, with note: the
// missing cells), the READMEs' share of them (ReadmeFile), its chart of
// test ECE and NLL per epoch and its chart of AUROC. runs and histories
// are per method spec, a run a seed.
func WriteStudy(dir string, s Study, runs map[string][]Run, histories map[string][][]experiment.MetricsLine, note string) error {
	ood := OODDataset(s.Dataset)
	r := newReport(s, runs)
	text := fmt.Sprintf("# %s: the paper's protocol, %d epochs\n\nTest split; mean ± sample sd over the seeds a method has. "+
		"ECE at T, NLL at T: after temperature scaling fitted on the validation split. "+
		"AUROC: the %s test inputs told from this data set's by the ensemble's predictive entropy or mutual information.\n\n%s%s",
		s.Dataset, s.Epochs, ood, r.markdown()+validNLLTable(s.specs(), histories, s.Epochs), note)
	if err := writeText(filepath.Join(dir, File), text); err != nil {
		return err
	}
	if err := writeText(filepath.Join(dir, ReadmeFile), r.readme()); err != nil {
		return err
	}
	if len(histories) == 0 {
		return nil
	}
	if len(r.last) > 0 && ood != "" {
		path := filepath.Join(dir, OODChart)
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
			return writeOODChart(w, s.Dataset, ood, s.specs(), r.last)
		}); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	path := filepath.Join(dir, CalibrationChart)
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return curves.Calibration(w, s.Dataset, s.specs(), histories) }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// studyMetric is one figure of a study's tables, read from a checkpoint's
// assessment (or, for the raw scores, a history line).
type studyMetric struct {
	measure
	// Of reads the figure of one task from an assessment's task, its OOD
	// part and the task's index; ok false where the run has none.
	Of func(t experiment.AssessedTask, ood *experiment.OOD, j int) (float64, bool)
}

func rawOf(f func(metrics.Score) float64) func(experiment.AssessedTask, *experiment.OOD, int) (float64, bool) {
	return func(t experiment.AssessedTask, _ *experiment.OOD, _ int) (float64, bool) {
		if t.Raw.Classification == nil {
			return 0, false
		}
		return f(t.Raw), true
	}
}

func calOf(f func(metrics.Score) float64) func(experiment.AssessedTask, *experiment.OOD, int) (float64, bool) {
	return func(t experiment.AssessedTask, _ *experiment.OOD, _ int) (float64, bool) {
		if t.Calibrated == nil || t.Calibrated.Classification == nil {
			return 0, false
		}
		return f(*t.Calibrated), true
	}
}

// studyMetrics are the columns of a study's tables, per task.
var studyMetrics = []studyMetric{
	{measure{Name: "accuracy", Higher: true, Scale: 1, Digits: 4}, rawOf(func(s metrics.Score) float64 { return s.Accuracy })},
	{measure{Name: "ECE %", Scale: 100, Digits: 2}, rawOf(func(s metrics.Score) float64 { return s.ECE })},
	{measure{Name: "conf − acc %", Signed: true, Scale: 100, Digits: 2}, rawOf(func(s metrics.Score) float64 { return s.Confidence - s.Accuracy })},
	{measure{Name: "NLL", Scale: 1, Digits: 4}, rawOf(func(s metrics.Score) float64 { return s.NLL })},
	{measure{Name: "ECE % at T", Scale: 100, Digits: 2}, calOf(func(s metrics.Score) float64 { return s.ECE })},
	{measure{Name: "NLL at T", Scale: 1, Digits: 4}, calOf(func(s metrics.Score) float64 { return s.NLL })},
	{measure{Name: "AUROC entropy", Higher: true, Scale: 1, Digits: 4}, func(_ experiment.AssessedTask, o *experiment.OOD, j int) (float64, bool) {
		if o == nil || j >= len(o.Tasks) {
			return 0, false
		}
		return o.Tasks[j].Entropy, true
	}},
	{measure{Name: "AUROC MI", Higher: true, Scale: 1, Digits: 4}, func(_ experiment.AssessedTask, o *experiment.OOD, j int) (float64, bool) {
		if o == nil || j >= len(o.Tasks) {
			return 0, false
		}
		return o.Tasks[j].MutualInformation, true
	}},
}

// studyMeasures are studyMetrics' measures, in order.
func studyMeasures() []measure {
	var out []measure
	for _, mt := range studyMetrics {
		out = append(out, mt.measure)
	}
	return out
}

// metricIndex is the place of the study metric named name.
func metricIndex(name string) int {
	for i, mt := range studyMetrics {
		if mt.Name == name {
			return i
		}
	}
	panic("study: no study metric " + name)
}

// studyRow is one method spec and task at one checkpoint, over its seeds.
type studyRow struct {
	Method, Task string
	Seeds        int
	Vals         []stat // per studyMetrics; N 0 where no run has it
	Epochs       stat   // the epoch the checkpoint holds
}

// studyRows gathers, for each method and task, the figures of the
// checkpoint pick chooses from each run's assessment.
func studyRows(methods []string, runs map[string][]Run, pick func(*Assessed) *experiment.Assessment) []studyRow {
	var rows []studyRow
	for _, m := range methods {
		var as []*experiment.Assessment
		for _, r := range runs[m] {
			if r.Assessed != nil && pick(r.Assessed) != nil {
				as = append(as, pick(r.Assessed))
			}
		}
		if len(as) == 0 {
			continue
		}
		for j, t := range as[0].Tasks {
			if t.Raw.Classification == nil {
				continue
			}
			row := studyRow{Method: m, Task: t.Task, Seeds: len(as)}
			var epochs []float64
			for _, a := range as {
				epochs = append(epochs, float64(a.Epoch))
			}
			row.Epochs = newStat(epochs)
			for _, mt := range studyMetrics {
				var v []float64
				for _, a := range as {
					if j < len(a.Tasks) {
						if x, ok := mt.Of(a.Tasks[j], a.OOD, j); ok {
							v = append(v, x)
						}
					}
				}
				row.Vals = append(row.Vals, newStat(v))
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// show prints a stat of a measure: mean ± sd over seeds, the mean alone
// for one seed, "—" for none.
func (m measure) show(s stat) string {
	switch s.N {
	case 0:
		return "—"
	case 1:
		return s.meanText(m.Scale, m.Digits)
	}
	return fmt.Sprintf("%s±%.*f", s.meanText(m.Scale, m.Digits), m.Digits, m.Scale*s.SD)
}

// mean prints the mean of a stat of a measure alone, "—" for none.
func (m measure) mean(s stat) string {
	if s.N == 0 {
		return "—"
	}
	return s.meanText(m.Scale, m.Digits)
}

// studyTable is rows as Markdown: a row per method and task, a column per
// metric, the paper's ECE beside ours.
func studyTable(dataset string, rows []studyRow) string {
	var b strings.Builder
	b.WriteString("| method | task | seeds | epoch |")
	for _, mt := range studyMetrics {
		b.WriteString(" " + mt.Name + " |")
		if mt.Name == "ECE %" {
			b.WriteString(" paper ECE % |")
		}
	}
	b.WriteString("\n|---|---|---|---|" + strings.Repeat("---|", len(studyMetrics)+1) + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |", r.Method, r.Task, r.Seeds, epochs(r.Epochs))
		for i, mt := range studyMetrics {
			b.WriteString(" " + mt.show(r.Vals[i]) + " |")
			if mt.Name == "ECE %" {
				if f, ok := paper(dataset, r.Method, r.Task); ok {
					fmt.Fprintf(&b, " %.2f |", f.ECE)
				} else {
					b.WriteString(" — |")
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func epochs(s stat) string {
	if s.N < 2 || s.SD == 0 {
		return fmt.Sprintf("%.0f", s.Mean)
	}
	return fmt.Sprintf("%.0f±%.0f", s.Mean, s.SD)
}

// bestTestRows are, per method and task, the raw test scores at the
// epoch of each run's best mean test accuracy over the tasks: the rule of
// the authors' script, chosen on the test split, so for comparison with
// the paper's figures only.
func bestTestRows(methods []string, runs map[string][]Run) []studyRow {
	var rows []studyRow
	for _, m := range methods {
		var as []experiment.Assessment
		for _, r := range runs[m] {
			if a, ok := atBestTest(r.History); ok {
				as = append(as, a)
			}
		}
		if len(as) == 0 {
			continue
		}
		byMethod := map[string][]Run{m: nil}
		for i := range as {
			byMethod[m] = append(byMethod[m], Run{Assessed: &Assessed{Last: as[i]}})
		}
		rows = append(rows, studyRows([]string{m}, byMethod, func(a *Assessed) *experiment.Assessment { return &a.Last })...)
	}
	return rows
}

// atBestTest is the history's test scores at the epoch with the best mean
// test accuracy over the classification tasks (the first such epoch).
func atBestTest(history []experiment.MetricsLine) (experiment.Assessment, bool) {
	best, bestEpoch := math.Inf(-1), 0
	byEpoch := map[int][]experiment.MetricsLine{}
	for _, l := range history {
		if l.Split == "test" && l.Classification != nil {
			byEpoch[l.Epoch] = append(byEpoch[l.Epoch], l)
		}
	}
	for e := 1; e <= len(byEpoch); e++ {
		lines := byEpoch[e]
		if len(lines) == 0 {
			continue
		}
		acc := 0.0
		for _, l := range lines {
			acc += l.Accuracy / float64(len(lines))
		}
		if acc > best {
			best, bestEpoch = acc, e
		}
	}
	if bestEpoch == 0 {
		return experiment.Assessment{}, false
	}
	a := experiment.Assessment{Epoch: bestEpoch}
	for _, l := range byEpoch[bestEpoch] {
		a.Tasks = append(a.Tasks, experiment.AssessedTask{Task: l.Task, Raw: l.Score})
	}
	return a, true
}
