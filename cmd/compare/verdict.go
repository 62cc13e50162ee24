package main

import (
	"fmt"
	"math"
	"strings"
)

// verdict sets each MT-SGD method of rows against the best baseline, per
// task and metric: the lowest mean ECE and NLL (highest mean accuracy;
// MSE for regression) among the methods that are not MT-SGD. A
// difference counts as larger than the seed spread when the two means
// are further apart than the sum of their standard deviations, so that
// their mean ± sd intervals do not overlap. With three seeds that is a
// rough reading, not a significance test, and the table says so; it is
// fixed here so that the README's sentences follow from the result files
// and not from a reading of them.
func verdict(methods []string, rows []row) string {
	isMTSGD := func(m string) bool { return m == "mtsgd" || strings.HasPrefix(m, "mtsgd:") }
	type metric struct {
		name   string
		higher bool // higher is better
		get    func(row) stat
		digits int
		scale  float64
	}
	classification := []metric{
		{"accuracy", true, func(r row) stat { return r.Accuracy }, 3, 1},
		{"ECE %", false, func(r row) stat { return r.ECE }, 2, 100},
		{"NLL", false, func(r row) stat { return r.NLL }, 3, 1},
	}
	regression := []metric{{"MSE", false, func(r row) stat { return r.MSE }, 4, 1}}

	var b strings.Builder
	for _, m := range methods {
		if !isMTSGD(m) {
			continue
		}
		for _, mine := range rows {
			if mine.Method != m {
				continue
			}
			metrics := classification
			if mine.Regression {
				metrics = regression
			}
			for _, mt := range metrics {
				best, found := row{}, false
				for _, r := range rows {
					if r.Task != mine.Task || isMTSGD(r.Method) {
						continue
					}
					if !found || better(mt.get(r).Mean, mt.get(best).Mean, mt.higher) {
						best, found = r, true
					}
				}
				if !found {
					continue
				}
				if b.Len() == 0 {
					b.WriteString("| MT-SGD against the best tuned baseline | task | metric | MT-SGD | best baseline | MT-SGD − baseline | beyond the seed spread? |\n|---|---|---|---|---|---|---|\n")
				}
				a, o := mt.get(mine), mt.get(best)
				show := func(s stat) string {
					return fmt.Sprintf("%.*f±%.*f", mt.digits, mt.scale*s.Mean, mt.digits, mt.scale*s.SD)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s (%s) | %+.*f | %s |\n", m, mine.Task, mt.name,
					show(a), show(o), best.Method, mt.digits, mt.scale*(a.Mean-o.Mean), beyond(a, o, mt.higher))
			}
		}
	}
	return b.String()
}

func better(x, y float64, higher bool) bool {
	if higher {
		return x > y
	}
	return x < y
}

// beyond says whether a (MT-SGD) is ahead of or behind o (the baseline)
// by more than the sum of their seed standard deviations.
func beyond(a, o stat, higher bool) string {
	if a.N < 2 || o.N < 2 {
		return "one seed: no spread"
	}
	d := a.Mean - o.Mean
	if math.Abs(d) <= a.SD+o.SD {
		return "no, within it"
	}
	if better(a.Mean, o.Mean, higher) {
		return "yes, MT-SGD ahead"
	}
	return "yes, MT-SGD behind"
}
