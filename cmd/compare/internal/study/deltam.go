package study

import (
	"fmt"
	"slices"
	"strings"
)

// Δm % is the one figure per method that the multi-task literature sums
// its tables by (Maninis et al., "Attentive single-tasking of multiple
// tasks", CVPR 2019; as LibMTL reports it): a method m's mean relative
// gain over single-task training b on each task's primary metric,
//
//	Δm = (1/T) Σ_t (−1)^{l_t} (M_{m,t} − M_{b,t}) / M_{b,t} × 100,
//
// over the T tasks, M the metric's mean over the seeds as the tables
// average it, l_t = 0 where higher is better (accuracy, for a
// classification task) and 1 where lower is better (MSE, for a
// regression task). Positive is better than single-task training; the
// baseline's own Δm is 0. The baseline is the method spec singleTask of
// the same comparison; where it has no runs, or it and m do not share
// their tasks, Δm is not defined and the tables print "—".

// singleTask is the method spec whose runs are Δm's baseline.
const singleTask = "single"

// deltaMHead is the heading of Δm's column.
const deltaMHead = "Δm % against single-task"

// noSingleTaskNote stands under a Δm table of a comparison without the
// baseline.
const noSingleTaskNote = "Δm %: — throughout, since this comparison has no run of the method spec `single` (single-task training), Δm's baseline.\n"

// taskPrimary is one task's primary metric for Δm: its mean over the
// seeds, and whether lower is better (MSE) rather than higher (accuracy).
type taskPrimary struct {
	Task  string
	Mean  float64
	Lower bool
}

// deltaM is Δm % of a method's tasks mine against the baseline's tasks
// single; ok is false where it is not defined: no tasks, tasks or their
// kinds that differ between the two, or a baseline metric of 0.
func deltaM(mine, single []taskPrimary) (dm float64, ok bool) {
	if len(mine) == 0 || len(mine) != len(single) {
		return 0, false
	}
	sum := 0.0
	for _, t := range mine {
		i := slices.IndexFunc(single, func(b taskPrimary) bool { return b.Task == t.Task })
		if i < 0 || single[i].Lower != t.Lower || single[i].Mean == 0 {
			return 0, false
		}
		rel := (t.Mean - single[i].Mean) / single[i].Mean
		if t.Lower {
			rel = -rel
		}
		sum += rel
	}
	return 100 * sum / float64(len(mine)), true
}

// deltaMCell is Δm % of method against the baseline, both from primaries
// (a method spec's tasks), printed with two decimals; "—" where it is not
// defined.
func deltaMCell(method string, primaries map[string][]taskPrimary) string {
	dm, ok := deltaM(primaries[method], primaries[singleTask])
	if !ok {
		return "—"
	}
	s := fmt.Sprintf("%.2f", dm)
	if s == "-0.00" {
		return "0.00"
	}
	return s
}

// deltaMColumn is one column of a Δm table: its heading and the tasks'
// primary metrics per method spec.
type deltaMColumn struct {
	Head      string
	Primaries map[string][]taskPrimary
}

// deltaMTable is a row per method spec of methods that some column has,
// a column per deltaMColumn; under it noSingleTaskNote where no column
// has the baseline.
func deltaMTable(methods []string, cols []deltaMColumn) string {
	var b strings.Builder
	b.WriteString("| method |")
	for _, c := range cols {
		b.WriteString(" " + c.Head + " |")
	}
	b.WriteString("\n" + strings.Repeat("|---", 1+len(cols)) + "|\n")
	baseline := false
	for _, c := range cols {
		baseline = baseline || len(c.Primaries[singleTask]) > 0
	}
	for _, m := range methods {
		has := false
		for _, c := range cols {
			has = has || len(c.Primaries[m]) > 0
		}
		if !has {
			continue
		}
		b.WriteString("| " + m + " |")
		for _, c := range cols {
			b.WriteString(" " + deltaMCell(m, c.Primaries) + " |")
		}
		b.WriteString("\n")
	}
	if !baseline {
		b.WriteString("\n" + noSingleTaskNote)
	}
	return b.String()
}

// comparisonPrimaries are rows' primary metrics per method: mean test
// accuracy, or MSE for a regression task.
func comparisonPrimaries(rows []row) map[string][]taskPrimary {
	out := map[string][]taskPrimary{}
	for _, r := range rows {
		p := taskPrimary{Task: r.Task, Mean: r.Accuracy.Mean}
		if r.Regression {
			p = taskPrimary{Task: r.Task, Mean: r.MSE.Mean, Lower: true}
		}
		out[r.Method] = append(out[r.Method], p)
	}
	return out
}

// studyPrimaries are a study's rows' primary metrics per method: mean
// test accuracy (a study's rows are its classification tasks).
func studyPrimaries(rows []studyRow) map[string][]taskPrimary {
	acc := metricIndex("accuracy")
	out := map[string][]taskPrimary{}
	for _, r := range rows {
		if r.Vals[acc].N > 0 {
			out[r.Method] = append(out[r.Method], taskPrimary{Task: r.Task, Mean: r.Vals[acc].Mean})
		}
	}
	return out
}
