package study

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
)

// report is a study's rows at each checkpoint and MT-SGD's verdicts,
// from which both File and ReadmeFile are written.
type report struct {
	study      Study
	runs       map[string][]Run
	last, best []studyRow
	verdicts   []verdictSet
	pairs      []pairSet
}

// verdictSet is one MT-SGD spec against the other specs of its learning
// rate, at last/ and at best/.
type verdictSet struct {
	Method     Method
	Last, Best []judgement
}

func newReport(s Study, runs map[string][]Run) report {
	r := report{study: s, runs: runs,
		last: studyRows(s.specs(), runs, func(a *Assessed) *experiment.Assessment { return &a.Last }),
		best: studyRows(s.specs(), runs, func(a *Assessed) *experiment.Assessment { return a.Best }),
	}
	// The methods at the study's rate (the paper's) and those at rates of
	// their own (the tuned ones) are judged apart.
	var paperRate, tuned []string
	for _, m := range s.Methods {
		if m.LR > 0 {
			tuned = append(tuned, m.Spec)
		} else {
			paperRate = append(paperRate, m.Spec)
		}
	}
	for _, group := range [][]string{paperRate, tuned} {
		inGroup := func(spec string) bool { return slices.Contains(group, spec) }
		for _, m := range s.Methods {
			if !inGroup(m.Spec) || m.Name != "mtsgd" {
				continue
			}
			r.verdicts = append(r.verdicts, verdictSet{Method: m,
				Last: judge(m.Spec, studyFigures(r.last), studyMeasures(), inGroup),
				Best: judge(m.Spec, studyFigures(r.best), studyMeasures(), inGroup)})
			set := pairSet{Heading: fmt.Sprintf("%s at %s against each other method of that rate", title(m), rateLabel(s.rate(m)))}
			for _, o := range group {
				if o != m.Spec {
					set.Pairs = append(set.Pairs, newPair(m.Spec, o, r.last, r.best))
				}
			}
			r.pairs = append(r.pairs, set)
		}
	}
	if l, ok := s.tunedLinear(); ok {
		set := pairSet{Heading: fmt.Sprintf("Each method at its tuned rate against %s at %s", title(l), rateLabel(l.LR))}
		for _, o := range tuned {
			if o != l.Spec {
				set.Pairs = append(set.Pairs, newPair(o, l.Spec, r.last, r.best))
			}
		}
		r.pairs = append(r.pairs, set)
	}
	return r
}

// tunedLinear is the study's linear scalarisation at a tuned rate of its
// own, with no other option: the baseline the field's methods are set
// against.
func (s Study) tunedLinear() (Method, bool) {
	for _, m := range s.Methods {
		if m.Name == "linear" && m.LR > 0 && strings.Count(m.Spec, "@") == 1 {
			return m, true
		}
	}
	return Method{}, false
}

// studyFigures are rows as judge reads them.
func studyFigures(rows []studyRow) []figures {
	var out []figures
	for _, r := range rows {
		out = append(out, figures{Method: r.Method, Task: r.Task, Vals: r.Vals})
	}
	return out
}

// markdown is File's tables: each method spec at its last epoch, at
// best/ and at its best test epoch, each method spec's Δm % against
// single-task training at those three (deltam.go), and MT-SGD against the
// other methods of its learning rate, the paper's and the tuned ones
// apart.
func (r report) markdown() string {
	dataset := r.study.Dataset
	var b strings.Builder
	fmt.Fprintf(&b, "## At the last epoch (last/)\n\n%s\n", studyTable(dataset, r.last))
	fmt.Fprintf(&b, "## At best/ (the epoch of best validation accuracy)\n\n%s\n", studyTable(dataset, r.best))
	bestTest := bestTestRows(r.study.specs(), r.runs)
	fmt.Fprintf(&b, "## At the epoch of best test accuracy\n\nThe rule of the authors' script, chosen on the test split: for setting our figures beside the paper's only; no choice of ours is made here.\n\n%s\n",
		studyTable(dataset, bestTest))
	fmt.Fprintf(&b, "## Δm %% against single-task training\n\n"+
		"Per method spec, at each checkpoint above: the mean over the tasks of the relative gain in mean test accuracy over the method spec `single` (Maninis et al. 2019), in percent; positive is better than single-task training.\n\n%s\n",
		deltaMTable(r.study.specs(), []deltaMColumn{
			{"last epoch", studyPrimaries(r.last)}, {"best/", studyPrimaries(r.best)}, {"best test epoch", studyPrimaries(bestTest)}}))
	b.WriteString("## MT-SGD against the best other method of its learning rate\n\n" +
		"Per task and metric (conf − acc: nearest 0 is best); beyond the seed spread when the means differ by more than the sum of their standard deviations, a rough reading with three seeds.\n\n")
	for _, v := range r.verdicts {
		for _, at := range []struct {
			name string
			js   []judgement
		}{{"last epoch", v.Last}, {"best/", v.Best}} {
			if len(at.js) == 0 {
				continue
			}
			fmt.Fprintf(&b, "At the %s:\n\n", at.name)
			b.WriteString("| " + v.Method.Spec + " against the best other | task | metric | MT-SGD | best other | difference | beyond the seed spread? |\n|---|---|---|---|---|---|---|\n")
			for _, j := range at.js {
				fmt.Fprintf(&b, "| | %s | %s | %s | %s (%s) | %s | %s |\n", j.Task, j.Measure.Name, j.Measure.show(j.Mine),
					j.Measure.show(j.Other), j.OtherMethod, j.difference(), j.seedSpread())
			}
			b.WriteString("\n")
		}
	}
	for _, set := range r.pairs {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", set.Heading, pairNote)
		for _, at := range []struct {
			name string
			best bool
		}{{"last epoch", false}, {"best/", true}} {
			fmt.Fprintf(&b, "At the %s:\n\n%s\n", at.name, pairTable(set, at.best))
		}
	}
	return b.String()
}

// pairNote stands under the heading of each pair set's tables.
const pairNote = "A row per pair: the difference subject − other per task (in the tables' order of tasks, \"/\" between them) and whether it is beyond the seed spread, by the rule above; ahead and behind speak of the subject. " +
	"Δm % is judged from each run's own Δm against single-task training's mean accuracies."

// The headings of ReadmeFile's tables, by which the READMEs name the
// table they show.
const (
	readmeMeans   = "Mean over the seeds"
	readmeMeansSD = "Mean ± sd over the seeds"
)

// readmeColumns are the columns of ReadmeFile's tables of figures: the
// heading, and the study metric shown ("" for the paper's ECE).
var readmeColumns = []struct{ Head, Metric string }{
	{"accuracy", "accuracy"}, {"ECE %", "ECE %"}, {"paper's ECE %", ""}, {"conf − acc %", "conf − acc %"},
	{"NLL", "NLL"}, {"NLL at T", "NLL at T"}, {"AUROC (entropy)", "AUROC entropy"},
}

// readme is ReadmeFile: the figures at the last epoch, a row per method
// spec and each cell its tasks' figures in order, without and with the
// seeds' sd; then each MT-SGD spec's verdicts, a row per metric.
func (r report) readme() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: the study's tables in the READMEs\n\n"+
		"From %s, at the last epoch on the test split: a row per method spec, each cell its tasks' figures in order (%s). "+
		"The paper's Table 2 ECE stands only beside runs at the paper's rate. "+
		"The READMEs show these tables as they are, and a test of cmd/compare checks that they do.\n",
		r.study.Dataset, File, strings.Join(r.tasks(), " / "))
	for _, t := range []struct {
		head string
		sd   bool
	}{{readmeMeans, false}, {readmeMeansSD, true}} {
		fmt.Fprintf(&b, "\n## %s\n\n%s", t.head, r.figuresTable(t.sd))
	}
	for _, v := range r.verdicts {
		if len(v.Last) > 0 {
			fmt.Fprintf(&b, "\n## %s\n\n%s", verdictHeading(r.study, v.Method), verdictTable(v))
		}
	}
	for _, set := range r.pairs {
		for _, at := range []struct {
			name string
			best bool
		}{{"the last epoch", false}, {"best/", true}} {
			fmt.Fprintf(&b, "\n## %s\n\n%s", pairHeading(set, at.name), pairTable(set, at.best))
		}
	}
	return b.String()
}

// tasks are the tasks of the rows at the last epoch, in order.
func (r report) tasks() []string {
	var out []string
	for _, row := range r.last {
		if !slices.Contains(out, row.Task) {
			out = append(out, row.Task)
		}
	}
	return out
}

// figuresTable is the last epoch's figures, a row per method spec; with
// sd each figure with its seeds' sd.
func (r report) figuresTable(sd bool) string {
	var b strings.Builder
	b.WriteString("| method | rate | seeds |")
	for _, c := range readmeColumns {
		b.WriteString(" " + c.Head + " |")
	}
	b.WriteString("\n" + strings.Repeat("|---", 3+len(readmeColumns)) + "|\n")
	for _, m := range r.study.Methods {
		var rows []studyRow
		for _, row := range r.last {
			if row.Method == m.Spec {
				rows = append(rows, row)
			}
		}
		if len(rows) == 0 {
			continue
		}
		rate := r.study.rate(m)
		fmt.Fprintf(&b, "| %s | %s | %d |", title(m), rateLabel(rate), rows[0].Seeds)
		for _, c := range readmeColumns {
			var cells []string
			for _, row := range rows {
				if c.Metric == "" {
					f, ok := paper(r.study.Dataset, row.Method, row.Task)
					if !ok || rate != experiment.Defaults(r.study.Dataset).LR {
						cells = append(cells, "—")
						continue
					}
					cells = append(cells, fmt.Sprintf("%.2f", f.ECE))
					continue
				}
				i := metricIndex(c.Metric)
				if sd {
					cells = append(cells, studyMetrics[i].show(row.Vals[i]))
				} else {
					cells = append(cells, studyMetrics[i].mean(row.Vals[i]))
				}
			}
			cell := strings.Join(cells, " / ")
			if c.Metric == "" && cells[0] == "—" {
				cell = "—"
			}
			b.WriteString(" " + minus(cell) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// verdictHeading is the heading of an MT-SGD spec's verdicts in
// ReadmeFile.
func verdictHeading(s Study, m Method) string {
	return fmt.Sprintf("%s at %s, against the best other method of that rate", title(m), rateLabel(s.rate(m)))
}

// verdictTable is v as a row per metric, a column per checkpoint and
// task: the difference MT-SGD − best other, and the verdict in a word.
func verdictTable(v verdictSet) string {
	var tasks, metrics []string
	for _, j := range v.Last {
		if !slices.Contains(tasks, j.Task) {
			tasks = append(tasks, j.Task)
		}
		if !slices.Contains(metrics, j.Measure.Name) {
			metrics = append(metrics, j.Measure.Name)
		}
	}
	var b strings.Builder
	b.WriteString("| metric |")
	for _, at := range []string{"last/", "best/"} {
		for _, t := range tasks {
			b.WriteString(" " + at + " " + t + " |")
		}
	}
	b.WriteString("\n" + strings.Repeat("|---", 1+2*len(tasks)) + "|\n")
	for _, name := range metrics {
		b.WriteString("| " + name + " |")
		for _, js := range [][]judgement{v.Last, v.Best} {
			for _, t := range tasks {
				cell := ""
				for _, j := range js {
					if j.Task == t && j.Measure.Name == name {
						cell = minus(j.difference() + " " + j.seedSpread().short())
						break
					}
				}
				b.WriteString(" " + cell + " |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// rate is the learning rate method m trains at in the study.
func (s Study) rate(m Method) float64 {
	if m.LR > 0 {
		return m.LR
	}
	return s.LR
}

// title is a method spec's name in prose: its method's title
// (experiment.Method), and a preset other than the default in brackets.
func title(m Method) string {
	t := m.Name
	if reg, err := experiment.LookupMethod(m.Name); err == nil && reg.Title != "" {
		t = reg.Title
	}
	if m.Preset != "" && m.Preset != experiment.DefaultPreset {
		t += " (" + m.Preset + ")"
	}
	return t
}

// rateLabel prints a learning rate as the READMEs do: below 0.01 in
// exponent form (1e-3), from 0.01 up as Go prints it shortest (0.01).
func rateLabel(lr float64) string {
	if lr >= 0.01 {
		return strconv.FormatFloat(lr, 'g', -1, 64)
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(lr, 'e', -1, 64), "e")
	e, _ := strconv.Atoi(exp)
	return fmt.Sprintf("%se%d", mant, e)
}

// minus writes the minus signs of printed figures as the READMEs do, "−".
func minus(s string) string { return strings.ReplaceAll(s, "-", "−") }
