package study

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// A measure is one figure the tables print and judge: its name, which
// way is better, and how it is printed (Scale times the value, Digits
// decimals).
type measure struct {
	Name   string
	Higher bool // higher is better
	Signed bool // better is nearer 0 (confidence − accuracy)
	Scale  float64
	Digits int
}

// better says whether x is a better value of the measure than y.
func (m measure) better(x, y float64) bool {
	switch {
	case m.Signed:
		return math.Abs(x) < math.Abs(y)
	case m.Higher:
		return x > y
	}
	return x < y
}

// spread is the verdict on MT-SGD against another method in one measure:
// whether their means differ by more than the seed spread.
type spread int

const (
	oneSeed spread = iota // a side has one seed: no spread to judge by
	within
	ahead
	behind
)

// String is the verdict as study.md and summary.md print it.
func (s spread) String() string {
	return [...]string{"one seed: no spread", "no, within it", "yes, MT-SGD ahead", "yes, MT-SGD behind"}[s]
}

// short is the verdict in a word, as the READMEs' tables print it.
func (s spread) short() string {
	return [...]string{"one seed", "within", "ahead", "behind"}[s]
}

// beyond judges a (MT-SGD) against o (the best other method) in measure
// m. A difference counts as larger than the seed spread when the two
// means are further apart than the sum of their standard deviations, so
// that their mean ± sd intervals do not overlap. With three seeds that is
// a rough reading, not a significance test, and the tables say so; it is
// fixed here so that every table judges alike.
func (m measure) beyond(a, o stat) spread {
	if a.N < 2 || o.N < 2 {
		return oneSeed
	}
	if math.Abs(a.Mean-o.Mean) <= a.SD+o.SD {
		return within
	}
	if m.better(a.Mean, o.Mean) {
		return ahead
	}
	return behind
}

// figures are one method's stats on one task, by measure.
type figures struct {
	Method, Task string
	Vals         []stat // per measure; N 0 where the run has none
}

// judgement is MT-SGD's figure against the best other method's, for one
// task and measure.
type judgement struct {
	Task        string
	Measure     measure
	Mine, Other stat
	OtherMethod string
}

// seedSpread is the judgement's verdict (measure.beyond).
func (j judgement) seedSpread() spread { return j.Measure.beyond(j.Mine, j.Other) }

// difference is MT-SGD's mean less the other's, as the measure prints it:
// from the exact means (stat.exactMean) where both have them.
func (j judgement) difference() string {
	a, okA := j.Mine.exactMean()
	o, okO := j.Other.exactMean()
	if !okA || !okO {
		return fmt.Sprintf("%+.*f", j.Measure.Digits, j.Measure.Scale*(j.Mine.Mean-j.Other.Mean))
	}
	d := fixed(new(big.Rat).Sub(a, o), j.Measure.Scale, j.Measure.Digits)
	if !strings.HasPrefix(d, "-") {
		d = "+" + d
	}
	return d
}

// judge sets the rows of method mine against the best of the rows whose
// method other accepts, per task (in mine's rows' order) and measure:
// the first row with the best mean. A measure that mine's row lacks, or
// that no other row has, is not judged.
func judge(mine string, rows []figures, measures []measure, other func(method string) bool) []judgement {
	var out []judgement
	for _, r := range rows {
		if r.Method != mine {
			continue
		}
		for i, m := range measures {
			if r.Vals[i].N == 0 {
				continue
			}
			var best figures
			found := false
			for _, o := range rows {
				if o.Task != r.Task || o.Method == mine || !other(o.Method) || o.Vals[i].N == 0 {
					continue
				}
				if !found || m.better(o.Vals[i].Mean, best.Vals[i].Mean) {
					best, found = o, true
				}
			}
			if found {
				out = append(out, judgement{Task: r.Task, Measure: m, Mine: r.Vals[i], Other: best.Vals[i], OtherMethod: best.Method})
			}
		}
	}
	return out
}
