package main

import (
	"fmt"
	"math"
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
func markdown(dataset string, rows []row) string {
	var b strings.Builder
	if len(rows) > 0 && rows[0].Regression {
		b.WriteString("| method | task | MSE | s/epoch |\n|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %.0f |\n", r.Method, r.Task, r.MSE, r.SecondsPerEpoch)
		}
		return b.String()
	}
	b.WriteString("| method | task | accuracy | paper | ECE (%) | paper | Brier | NLL | s/epoch |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		paperAcc, paperECE := "—", "—"
		if f, ok := paper(dataset, r.Method, r.Task); ok {
			if !math.IsNaN(f.Accuracy) {
				paperAcc = fmt.Sprintf("≈%.2f", f.Accuracy)
			}
			paperECE = fmt.Sprintf("%.2f", f.ECE)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f |\n",
			r.Method, r.Task, r.Accuracy, paperAcc, r.ECE.percent(), paperECE, r.Brier, r.NLL, r.SecondsPerEpoch)
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

// csvTable is the rows as CSV, one column per figure.
func csvTable(rows []row) string {
	var b strings.Builder
	b.WriteString("method,task,seeds,accuracy_mean,accuracy_sd,brier_mean,brier_sd,ece_mean,ece_sd,nll_mean,nll_sd,mse_mean,mse_sd,seconds_per_epoch\n")
	g := func(s stat) string {
		if s.N == 0 {
			return ","
		}
		return fmt.Sprintf("%.6g,%.6g", s.Mean, s.SD)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%d,%s,%s,%s,%s,%s,%.2f\n", r.Method, r.Task, r.Seeds, g(r.Accuracy), g(r.Brier), g(r.ECE), g(r.NLL), g(r.MSE), r.SecondsPerEpoch)
	}
	return b.String()
}
