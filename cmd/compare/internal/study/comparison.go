package study

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// SummaryFile is a tuned comparison's short table in OUT, the one the
// README shows: a row per method, a column per task.
const SummaryFile = "summary.md"

// Comparison is what a comparison's tables name: its data set, its
// method specs in order, and for the tuned protocol each method's choice
// as the tables print it (nil: no tuning).
type Comparison struct {
	Dataset string
	Methods []string
	Chosen  map[string]string
}

// WriteComparison writes into dir compare.md (a row per method and task,
// then each method's Δm % against single-task training (deltam.go), then
// note), compare.csv and compare.png (classification only) from each
// method's per-seed last-epoch test lines, and for a tuned comparison
// SummaryFile with MT-SGD's verdict; it prints the Markdown to stdout.
func WriteComparison(dir string, c Comparison, results map[string][][]experiment.MetricsLine, note string, stdout io.Writer) error {
	rows := summarise(c.Methods, results)
	md := markdown(c.Dataset, rows, c.Chosen)
	if len(rows) > 0 {
		md += "\n" + deltaMTable(c.Methods, []deltaMColumn{{deltaMHead, comparisonPrimaries(rows)}})
	}
	md += note
	csv := csvTable(rows, c.Chosen)
	files := map[string]string{"compare.md": md, "compare.csv": csv}
	if c.Chosen != nil {
		files[SummaryFile] = summary(c.Dataset, c.Methods, rows, c.Chosen)
		if v := verdict(c.Methods, rows); v != "" {
			files[SummaryFile] += "\n" + v
		}
	}
	for name, text := range files {
		if err := writeText(filepath.Join(dir, name), text); err != nil {
			return err
		}
	}
	if len(rows) > 0 && !rows[0].Regression {
		var methods []string // those with a finished run
		for _, m := range c.Methods {
			if len(results[m]) > 0 {
				methods = append(methods, m)
			}
		}
		chart := filepath.Join(dir, "compare.png")
		if err := atomicfile.Write(chart, 0o644, func(w io.Writer) error { return writeChart(w, c.Dataset, methods, rows) }); err != nil {
			return fmt.Errorf("writing %s: %w", chart, err)
		}
	}
	if c.Chosen != nil {
		md += "\n" + files[SummaryFile]
	}
	_, err := io.WriteString(stdout, md)
	return err
}

// writeText writes text to path, atomically.
func writeText(path, text string) error {
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// row is one method and task over the seeds.
type row struct {
	Method, Task                   string
	Seeds                          int
	Regression                     bool
	Accuracy, Brier, ECE, NLL, MSE stat
	SecondsPerEpoch                float64
}

// summarise turns each method's per-seed last-epoch test lines into rows,
// in the order of methods and then tasks, each task's row over the runs
// that have that task.
func summarise(methods []string, results map[string][][]experiment.MetricsLine) []row {
	var rows []row
	for _, m := range methods {
		runs := results[m]
		for _, task := range taskOrder(runs) {
			var acc, brier, ece, nll, mse []float64
			var seeds []experiment.MetricsLine // the task's line of each run that has it
			for _, lines := range runs {
				if i := slices.IndexFunc(lines, func(l experiment.MetricsLine) bool { return l.Task == task }); i >= 0 {
					seeds = append(seeds, lines[i])
				}
			}
			secs := 0.0
			for _, l := range seeds {
				if l.Regression != nil {
					mse = append(mse, l.MSE)
				} else {
					acc, brier, ece, nll = append(acc, l.Accuracy), append(brier, l.Brier), append(ece, l.ECE), append(nll, l.NLL)
				}
				secs += l.Seconds / float64(l.Epoch) / float64(len(seeds))
			}
			rows = append(rows, row{
				Method: m, Task: task, Seeds: len(seeds), Regression: seeds[0].Regression != nil,
				Accuracy: newStat(acc), Brier: newStat(brier), ECE: newStat(ece), NLL: newStat(nll), MSE: newStat(mse),
				SecondsPerEpoch: secs,
			})
		}
	}
	return rows
}

// taskOrder is the tasks of runs in the order they first appear: a run
// may lack some (the single-task runs folded into one method, some of
// them not yet finished).
func taskOrder(runs [][]experiment.MetricsLine) []string {
	var tasks []string
	for _, lines := range runs {
		for _, l := range lines {
			if !slices.Contains(tasks, l.Task) {
				tasks = append(tasks, l.Task)
			}
		}
	}
	return tasks
}

// markdown is the rows as a Markdown table. For classification each of
// our figures stands beside the paper's where it has one (see
// paperFigures): accuracy, then ECE in percent as the paper prints it.
// With chosen (the tuned protocol) a column gives each method's choice.
func markdown(dataset string, rows []row, chosen map[string]string) string {
	var b strings.Builder
	method := func(r row) string {
		if chosen == nil {
			return r.Method
		}
		return r.Method + " | " + chosen[r.Method]
	}
	head := "| method |"
	if chosen != nil {
		head = "| method | chosen |"
	}
	if len(rows) > 0 && rows[0].Regression {
		b.WriteString(head + " task | MSE | s/epoch |\n" + rule(head) + "---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %.0f |\n", method(r), r.Task, r.MSE, r.SecondsPerEpoch)
		}
		return b.String()
	}
	b.WriteString(head + " task | accuracy | paper | ECE (%) | paper | Brier | NLL | s/epoch |\n" + rule(head) + "---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		paperAcc, paperECE := "—", "—"
		if f, ok := paper(dataset, r.Method, r.Task); ok {
			if !math.IsNaN(f.Accuracy) {
				paperAcc = fmt.Sprintf("≈%.2f", f.Accuracy)
			}
			paperECE = fmt.Sprintf("%.2f", f.ECE)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f |\n",
			method(r), r.Task, r.Accuracy, paperAcc, r.ECE.percent(), paperECE, r.Brier, r.NLL, r.SecondsPerEpoch)
	}
	return b.String()
}

// rule is the Markdown separator row of a header's leading cells.
func rule(head string) string { return strings.Repeat("|---", strings.Count(head, "|")-1) + "|" }

// csvTable is the rows as CSV, one column per figure, then the method's
// Δm % against single-task training (empty where not defined); with
// chosen (the tuned protocol) a column before the seconds gives each
// method's choice.
func csvTable(rows []row, chosen map[string]string) string {
	var b strings.Builder
	col := ""
	if chosen != nil {
		col = "chosen,"
	}
	b.WriteString("method,task,seeds,accuracy_mean,accuracy_sd,brier_mean,brier_sd,ece_mean,ece_sd,nll_mean,nll_sd,mse_mean,mse_sd,delta_m_percent," + col + "seconds_per_epoch\n")
	g := func(s stat) string {
		if s.N == 0 {
			return ","
		}
		return fmt.Sprintf("%.6g,%.6g", s.Mean, s.SD)
	}
	primaries := comparisonPrimaries(rows)
	for _, r := range rows {
		if chosen != nil {
			col = fmt.Sprintf("%q,", chosen[r.Method])
		}
		dm := ""
		if v, ok := deltaM(primaries[r.Method], primaries[singleTask]); ok {
			dm = fmt.Sprintf("%.6g", v)
		}
		fmt.Fprintf(&b, "%s,%s,%d,%s,%s,%s,%s,%s,%s,%s%.2f\n", r.Method, r.Task, r.Seeds, g(r.Accuracy), g(r.Brier), g(r.ECE), g(r.NLL), g(r.MSE), dm, col, r.SecondsPerEpoch)
	}
	return b.String()
}

// summary is the rows as one line per method: its choice, then per task
// the test accuracy, ECE in percent with the paper's in brackets, and
// NLL (MSE for regression), each mean ± sd over the seeds, then its Δm %
// against single-task training; noSingleTaskNote under it where the
// comparison has no single-task run.
func summary(dataset string, methods []string, rows []row, chosen map[string]string) string {
	var tasks []string
	for _, r := range rows {
		if !slices.Contains(tasks, r.Task) {
			tasks = append(tasks, r.Task)
		}
	}
	primaries := comparisonPrimaries(rows)
	var b strings.Builder
	b.WriteString("| " + dataset + " | chosen | seeds |")
	for _, t := range tasks {
		if len(rows) > 0 && rows[0].Regression {
			b.WriteString(" " + t + " MSE |")
		} else {
			b.WriteString(" " + t + ": accuracy / ECE % [paper] / NLL |")
		}
	}
	b.WriteString(" Δm % | s/epoch |\n|---|---|---|" + strings.Repeat("---|", len(tasks)) + "---|---|\n")
	f := func(s stat, scale float64, digits int) string {
		if s.N < 2 {
			return fmt.Sprintf("%.*f", digits, scale*s.Mean)
		}
		return fmt.Sprintf("%.*f±%.*f", digits, scale*s.Mean, digits, scale*s.SD)
	}
	for _, m := range methods {
		var mine []row
		for _, r := range rows {
			if r.Method == m {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d |", m, chosen[m], mine[0].Seeds)
		for _, t := range tasks {
			i := slices.IndexFunc(mine, func(r row) bool { return r.Task == t })
			switch {
			case i < 0:
				b.WriteString(" — |")
			case mine[i].Regression:
				fmt.Fprintf(&b, " %s |", f(mine[i].MSE, 1, 4))
			default:
				r := mine[i]
				paperECE := ""
				if pf, ok := paper(dataset, m, t); ok {
					paperECE = fmt.Sprintf(" [%.2f]", pf.ECE)
				}
				fmt.Fprintf(&b, " %s / %s%s / %s |", f(r.Accuracy, 1, 3), f(r.ECE, 100, 2), paperECE, f(r.NLL, 1, 3))
			}
		}
		fmt.Fprintf(&b, " %s | %.0f |\n", deltaMCell(m, primaries), mine[0].SecondsPerEpoch)
	}
	if len(primaries[singleTask]) == 0 {
		b.WriteString("\n" + noSingleTaskNote)
	}
	return b.String()
}

// verdictMeasures are what summary.md judges MT-SGD by: accuracy, ECE and
// NLL for classification, MSE for regression (a row has the one kind).
var verdictMeasures = []measure{
	{Name: "accuracy", Higher: true, Scale: 1, Digits: 3},
	{Name: "ECE %", Scale: 100, Digits: 2},
	{Name: "NLL", Scale: 1, Digits: 3},
	{Name: "MSE", Scale: 1, Digits: 4},
}

// verdict sets each MT-SGD method of rows against the best baseline, per
// task and measure: the best mean among the methods that are not MT-SGD,
// judged by the seed spread (measure.beyond).
func verdict(methods []string, rows []row) string {
	var fs []figures
	for _, r := range rows {
		fs = append(fs, figures{Method: r.Method, Task: r.Task, Vals: []stat{r.Accuracy, r.ECE, r.NLL, r.MSE}})
	}
	baseline := func(m string) bool { return !isMTSGD(m) }
	var b strings.Builder
	for _, m := range methods {
		if !isMTSGD(m) {
			continue
		}
		for _, j := range judge(m, fs, verdictMeasures, baseline) {
			if b.Len() == 0 {
				b.WriteString("| MT-SGD against the best tuned baseline | task | metric | MT-SGD | best baseline | MT-SGD − baseline | beyond the seed spread? |\n|---|---|---|---|---|---|---|\n")
			}
			show := func(s stat) string {
				return fmt.Sprintf("%.*f±%.*f", j.Measure.Digits, j.Measure.Scale*s.Mean, j.Measure.Digits, j.Measure.Scale*s.SD)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s (%s) | %s | %s |\n", m, j.Task, j.Measure.Name,
				show(j.Mine), show(j.Other), j.OtherMethod, j.difference(), j.seedSpread())
		}
	}
	return b.String()
}

// isMTSGD says whether a method spec trains MT-SGD, in any preset.
func isMTSGD(spec string) bool {
	name, _, _ := strings.Cut(spec, "@")
	name, _, _ = strings.Cut(name, ":")
	return name == "mtsgd"
}
