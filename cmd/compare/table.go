package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
)

// stat is a mean and sample standard deviation over seeds.
type stat struct {
	Mean, SD float64
	N        int
}

func newStat(v []float64) stat {
	s := stat{N: len(v)}
	for _, x := range v {
		s.Mean += x / float64(len(v))
	}
	if len(v) > 1 {
		for _, x := range v {
			s.SD += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(s.SD / float64(len(v)-1))
	}
	return s
}

func (s stat) String() string {
	if s.N < 2 {
		return fmt.Sprintf("%.4f", s.Mean)
	}
	return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.SD)
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
// in the order of methods and then tasks.
func summarise(methods []string, results map[string][][]experiment.MetricsLine) []row {
	var rows []row
	for _, m := range methods {
		runs := results[m]
		if len(runs) == 0 {
			continue
		}
		for j, first := range runs[0] {
			var acc, brier, ece, nll, mse []float64
			secs := 0.0
			for _, lines := range runs {
				l := lines[j]
				if l.Regression != nil {
					mse = append(mse, l.MSE)
				} else {
					acc, brier, ece, nll = append(acc, l.Accuracy), append(brier, l.Brier), append(ece, l.ECE), append(nll, l.NLL)
				}
				secs += l.Seconds / float64(l.Epoch) / float64(len(runs))
			}
			rows = append(rows, row{
				Method: m, Task: first.Task, Seeds: len(runs), Regression: first.Regression != nil,
				Accuracy: newStat(acc), Brier: newStat(brier), ECE: newStat(ece), NLL: newStat(nll), MSE: newStat(mse),
				SecondsPerEpoch: secs,
			})
		}
	}
	return rows
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

// percent prints s scaled to percent, two decimals.
func (s stat) percent() string {
	if s.N < 2 {
		return fmt.Sprintf("%.2f", 100*s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", 100*s.Mean, 100*s.SD)
}

// rule is the Markdown separator row of a header's leading cells.
func rule(head string) string { return strings.Repeat("|---", strings.Count(head, "|")-1) + "|" }

// csvTable is the rows as CSV, one column per figure; with chosen (the
// tuned protocol) a column before the seconds gives each method's choice.
func csvTable(rows []row, chosen map[string]string) string {
	var b strings.Builder
	col := ""
	if chosen != nil {
		col = "chosen,"
	}
	b.WriteString("method,task,seeds,accuracy_mean,accuracy_sd,brier_mean,brier_sd,ece_mean,ece_sd,nll_mean,nll_sd,mse_mean,mse_sd," + col + "seconds_per_epoch\n")
	g := func(s stat) string {
		if s.N == 0 {
			return ","
		}
		return fmt.Sprintf("%.6g,%.6g", s.Mean, s.SD)
	}
	for _, r := range rows {
		if chosen != nil {
			col = fmt.Sprintf("%q,", chosen[r.Method])
		}
		fmt.Fprintf(&b, "%s,%s,%d,%s,%s,%s,%s,%s,%s%.2f\n", r.Method, r.Task, r.Seeds, g(r.Accuracy), g(r.Brier), g(r.ECE), g(r.NLL), g(r.MSE), col, r.SecondsPerEpoch)
	}
	return b.String()
}

// SummaryFile is a tuned comparison's short table in OUT, the one the
// README shows: a row per method, a column per task.
const SummaryFile = "summary.md"

// summary is the rows as one line per method: its choice, then per task
// the test accuracy, ECE in percent with the paper's in brackets, and
// NLL (MSE for regression), each mean ± sd over the seeds.
func summary(dataset string, methods []string, rows []row, chosen map[string]string) string {
	var tasks []string
	for _, r := range rows {
		if !slices.Contains(tasks, r.Task) {
			tasks = append(tasks, r.Task)
		}
	}
	var b strings.Builder
	b.WriteString("| " + dataset + " | chosen | seeds |")
	for _, t := range tasks {
		if len(rows) > 0 && rows[0].Regression {
			b.WriteString(" " + t + " MSE |")
		} else {
			b.WriteString(" " + t + ": accuracy / ECE % [paper] / NLL |")
		}
	}
	b.WriteString(" s/epoch |\n|---|---|---|" + strings.Repeat("---|", len(tasks)) + "---|\n")
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
		fmt.Fprintf(&b, " %.0f |\n", mine[0].SecondsPerEpoch)
	}
	return b.String()
}
