package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

// StudyFile is a study's tables in OUT (study.go), StudyCurvesFile its
// chart of test ECE and NLL per epoch, StudyOODFile its chart of AUROC.
const (
	StudyFile       = "study.md"
	StudyCurvesFile = "study-calibration.png"
	StudyOODFile    = "study-ood.png"
)

// studyRun is a finished run as a study's tables read it.
type studyRun struct {
	History  []experiment.MetricsLine
	Assessed *assessed
}

// studyMetric is one figure of a study's tables, read from a checkpoint's
// assessment (or, for the raw scores, a history line).
type studyMetric struct {
	Name   string
	Higher bool // higher is better; for the signed gap, nearer 0
	Signed bool // better is nearer 0 (confidence − accuracy)
	Scale  float64
	Digits int
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
	{Name: "accuracy", Higher: true, Scale: 1, Digits: 4, Of: rawOf(func(s metrics.Score) float64 { return s.Accuracy })},
	{Name: "ECE %", Scale: 100, Digits: 2, Of: rawOf(func(s metrics.Score) float64 { return s.ECE })},
	{Name: "conf − acc %", Signed: true, Scale: 100, Digits: 2, Of: rawOf(func(s metrics.Score) float64 { return s.Confidence - s.Accuracy })},
	{Name: "NLL", Scale: 1, Digits: 4, Of: rawOf(func(s metrics.Score) float64 { return s.NLL })},
	{Name: "ECE % at T", Scale: 100, Digits: 2, Of: calOf(func(s metrics.Score) float64 { return s.ECE })},
	{Name: "NLL at T", Scale: 1, Digits: 4, Of: calOf(func(s metrics.Score) float64 { return s.NLL })},
	{Name: "AUROC entropy", Higher: true, Scale: 1, Digits: 4, Of: func(_ experiment.AssessedTask, o *experiment.OOD, j int) (float64, bool) {
		if o == nil || j >= len(o.Tasks) {
			return 0, false
		}
		return o.Tasks[j].Entropy, true
	}},
	{Name: "AUROC MI", Higher: true, Scale: 1, Digits: 4, Of: func(_ experiment.AssessedTask, o *experiment.OOD, j int) (float64, bool) {
		if o == nil || j >= len(o.Tasks) {
			return 0, false
		}
		return o.Tasks[j].MutualInformation, true
	}},
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
func studyRows(methods []string, runs map[string][]studyRun, pick func(*assessed) *experiment.Assessment) []studyRow {
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

// show prints a stat of a metric: mean ± sd over seeds, the mean alone
// for one seed, "—" for none.
func (mt studyMetric) show(s stat) string {
	switch s.N {
	case 0:
		return "—"
	case 1:
		return fmt.Sprintf("%.*f", mt.Digits, mt.Scale*s.Mean)
	}
	return fmt.Sprintf("%.*f±%.*f", mt.Digits, mt.Scale*s.Mean, mt.Digits, mt.Scale*s.SD)
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

// studyVerdict sets the MT-SGD spec mine against the best of the other
// specs of the same learning rate (the paper's, or the tuned ones) per
// task and metric, as verdict does for the tuned table: beyond the seed
// spread when the means differ by more than the sum of the deviations.
func studyVerdict(mine string, others []string, rows []studyRow) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Method != mine {
			continue
		}
		for i, mt := range studyMetrics {
			if r.Vals[i].N == 0 {
				continue
			}
			var best studyRow
			found := false
			for _, o := range rows {
				if o.Task != r.Task || o.Method == mine || !slices.Contains(others, o.Method) || o.Vals[i].N == 0 {
					continue
				}
				if !found || mt.better(o.Vals[i].Mean, best.Vals[i].Mean) {
					best, found = o, true
				}
			}
			if !found {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("| " + mine + " against the best other | task | metric | MT-SGD | best other | difference | beyond the seed spread? |\n|---|---|---|---|---|---|---|\n")
			}
			a, o := r.Vals[i], best.Vals[i]
			fmt.Fprintf(&b, "| | %s | %s | %s | %s (%s) | %+.*f | %s |\n", r.Task, mt.Name, mt.show(a), mt.show(o), best.Method,
				mt.Digits, mt.Scale*(a.Mean-o.Mean), mt.beyond(a, o))
		}
	}
	return b.String()
}

// better says whether x is a better value of the metric than y.
func (mt studyMetric) better(x, y float64) bool {
	switch {
	case mt.Signed:
		return math.Abs(x) < math.Abs(y)
	case mt.Higher:
		return x > y
	}
	return x < y
}

// beyond is verdict's beyond for any metric.
func (mt studyMetric) beyond(a, o stat) string {
	if a.N < 2 || o.N < 2 {
		return "one seed: no spread"
	}
	if math.Abs(a.Mean-o.Mean) <= a.SD+o.SD {
		return "no, within it"
	}
	if mt.better(a.Mean, o.Mean) {
		return "yes, MT-SGD ahead"
	}
	return "yes, MT-SGD behind"
}

// bestTestRows are, per method and task, the raw test scores at the
// epoch of each run's best mean test accuracy over the tasks: the rule of
// the authors' script, chosen on the test split, so for comparison with
// the paper's figures only.
func bestTestRows(methods []string, runs map[string][]studyRun) []studyRow {
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
		byMethod := map[string][]studyRun{m: nil}
		for i := range as {
			byMethod[m] = append(byMethod[m], studyRun{Assessed: &assessed{Last: as[i]}})
		}
		rows = append(rows, studyRows([]string{m}, byMethod, func(a *assessed) *experiment.Assessment { return &a.Last })...)
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

// studyReport is a study's tables: each method spec at its last epoch,
// at best/ and at its best test epoch, and MT-SGD against the other
// methods of its learning rate, the paper's and the tuned ones apart.
func studyReport(dataset string, methods []string, runs map[string][]studyRun) string {
	last := studyRows(methods, runs, func(a *assessed) *experiment.Assessment { return &a.Last })
	best := studyRows(methods, runs, func(a *assessed) *experiment.Assessment { return a.Best })
	var b strings.Builder
	fmt.Fprintf(&b, "## At the last epoch (last/)\n\n%s\n", studyTable(dataset, last))
	fmt.Fprintf(&b, "## At best/ (the epoch of best validation accuracy)\n\n%s\n", studyTable(dataset, best))
	fmt.Fprintf(&b, "## At the epoch of best test accuracy\n\nThe rule of the authors' script, chosen on the test split: for setting our figures beside the paper's only; no choice of ours is made here.\n\n%s\n",
		studyTable(dataset, bestTestRows(methods, runs)))
	var paperRate, tuned []string
	for _, m := range methods {
		if mustSpec(m).LR > 0 {
			tuned = append(tuned, m)
		} else {
			paperRate = append(paperRate, m)
		}
	}
	b.WriteString("## MT-SGD against the best other method of its learning rate\n\n" +
		"Per task and metric (conf − acc: nearest 0 is best); beyond the seed spread when the means differ by more than the sum of their standard deviations, a rough reading with three seeds.\n\n")
	for _, group := range [][]string{paperRate, tuned} {
		for _, m := range group {
			if mustSpec(m).Name != "mtsgd" {
				continue
			}
			for _, at := range []struct {
				name string
				rows []studyRow
			}{{"last epoch", last}, {"best/", best}} {
				if v := studyVerdict(m, group, at.rows); v != "" {
					fmt.Fprintf(&b, "At the %s:\n\n%s\n", at.name, v)
				}
			}
		}
	}
	return b.String()
}
