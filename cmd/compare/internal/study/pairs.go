package study

import (
	"fmt"
	"slices"
	"strings"
)

// A pairSet judges method specs two by two, each pair on its own, rather
// than one method against the best of the others (judge): MT-SGD against
// each other method of its learning rate, and each method at its tuned
// rate against linear scalarisation at its tuned rate, so that no
// method's result is hidden behind another's.
type pairSet struct {
	Heading string // what is set against what, for the tables' headings
	Pairs   []pair
}

// pair is one method spec against another, at last/ and at best/: per
// task and measure, then Δm % (deltaMMeasure, task ""). The differences
// are Subject − Other, and a verdict's ahead or behind speaks of Subject.
type pair struct {
	Subject, Other string
	Last, Best     []judgement
}

// deltaMMeasure is Δm % as a measure: one figure per run over its tasks
// (seedDeltaM), higher better.
var deltaMMeasure = measure{Name: "Δm %", Higher: true, Scale: 1, Digits: 2}

// newPair judges subject against other in rows at last/ and best/.
func newPair(subject, other string, last, best []studyRow) pair {
	return pair{Subject: subject, Other: other, Last: judgePair(subject, other, last), Best: judgePair(subject, other, best)}
}

// judgePair sets subject's rows against other's of the same task, in each
// study measure both have, then their Δm % where both have it.
func judgePair(subject, other string, rows []studyRow) []judgement {
	var out []judgement
	for _, r := range rows {
		if r.Method != subject {
			continue
		}
		i := slices.IndexFunc(rows, func(o studyRow) bool { return o.Method == other && o.Task == r.Task })
		if i < 0 {
			continue
		}
		for k, m := range studyMeasures() {
			if r.Vals[k].N > 0 && rows[i].Vals[k].N > 0 {
				out = append(out, judgement{Task: r.Task, Measure: m, Mine: r.Vals[k], Other: rows[i].Vals[k], OtherMethod: other})
			}
		}
	}
	dm := seedDeltaM(rows)
	if a, ok := dm[subject]; ok {
		if o, ok := dm[other]; ok {
			out = append(out, judgement{Measure: deltaMMeasure, Mine: a, Other: o, OtherMethod: other})
		}
	}
	return out
}

// seedDeltaM is each method spec's Δm % per seed: for each of its runs,
// Δm (deltaM) of that run's test accuracies against single-task
// training's means over its seeds, so that Δm has a spread to judge by
// as the other measures have. Methods whose runs lack a task's accuracy,
// and every method where `single` has no runs, are left out.
func seedDeltaM(rows []studyRow) map[string]stat {
	acc := metricIndex("accuracy")
	var single []taskPrimary
	perSeed := map[string][][]taskPrimary{} // method → seed → tasks
	var methods []string
	for _, r := range rows {
		v := r.Vals[acc]
		if r.Method == singleTask {
			single = append(single, taskPrimary{Task: r.Task, Mean: v.Mean})
		}
		if len(v.vals) != v.N || v.N == 0 {
			continue
		}
		if _, ok := perSeed[r.Method]; !ok {
			methods = append(methods, r.Method)
			perSeed[r.Method] = make([][]taskPrimary, v.N)
		}
		seeds := perSeed[r.Method]
		if len(seeds) != v.N {
			perSeed[r.Method] = nil // tasks with differing numbers of runs: no per-seed Δm
			continue
		}
		for s, x := range v.vals {
			seeds[s] = append(seeds[s], taskPrimary{Task: r.Task, Mean: x})
		}
	}
	out := map[string]stat{}
	for _, m := range methods {
		var dms []float64
		for _, tasks := range perSeed[m] {
			dm, ok := deltaM(tasks, single)
			if !ok {
				dms = nil
				break
			}
			dms = append(dms, dm)
		}
		if len(dms) > 0 {
			out[m] = newStat(dms)
		}
	}
	return out
}

// pairHeading is the heading of set's table at a checkpoint.
func pairHeading(set pairSet, at string) string {
	return fmt.Sprintf("%s, at %s", set.Heading, at)
}

// pairTable is set at one checkpoint (last or best): a row per pair, a
// column per measure, each cell the difference Subject − Other and the
// verdict in a word, for each task in order ("/" between them).
func pairTable(set pairSet, best bool) string {
	var tasks []string
	var names []string
	for _, p := range set.Pairs {
		for _, j := range p.judgements(best) {
			if j.Task != "" && !slices.Contains(tasks, j.Task) {
				tasks = append(tasks, j.Task)
			}
			if !slices.Contains(names, j.Measure.Name) {
				names = append(names, j.Measure.Name)
			}
		}
	}
	// Measures in the study's order, Δm last.
	var cols []measure
	for _, m := range append(studyMeasures(), deltaMMeasure) {
		if slices.Contains(names, m.Name) {
			cols = append(cols, m)
		}
	}
	var b strings.Builder
	b.WriteString("| subject | other |")
	for _, m := range cols {
		b.WriteString(" " + m.Name + " |")
	}
	b.WriteString("\n" + strings.Repeat("|---", 2+len(cols)) + "|\n")
	for _, p := range set.Pairs {
		js := p.judgements(best)
		if len(js) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s |", p.Subject, p.Other)
		for _, m := range cols {
			var cells []string
			for _, j := range js {
				if j.Measure.Name == m.Name {
					cells = append(cells, j.difference()+" "+j.seedSpread().short())
				}
			}
			b.WriteString(" " + minus(strings.Join(cells, " / ")) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// judgements are p's at best/ or at the last epoch.
func (p pair) judgements(best bool) []judgement {
	if best {
		return p.Best
	}
	return p.Last
}
