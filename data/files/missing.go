package files

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// What a missing CSV input does (Options.Missing). A missing target
// never drops its row: it masks that task's loss there.
const (
	// MissingImpute fills a missing input from the training split: a
	// numeric column's median, with an indicator feature (1 where the
	// value was missing) where the training file has a missing value in
	// that column; a categorical column's MissingCategory. What scikit-
	// learn's SimpleImputer(add_indicator=True) does, and what keeps
	// every row: train's default.
	MissingImpute = "impute"
	// MissingRefuse refuses a missing input, naming its file, line and
	// column. MissingError is its name in specs recorded before
	// MissingImpute, and "" means it there.
	MissingRefuse = "refuse"
	MissingError  = "error"
	// MissingDrop drops a training, validation or test row with a
	// missing input, and says how many were dropped; predict skips such
	// rows and lists them (Inputs.Skipped).
	MissingDrop = "drop"
)

// MissingCategory is the category a categorical input column's missing
// cells take under MissingImpute, where its training file has one. A
// column without it encodes a missing cell as no category (all zeros).
const MissingCategory = "(missing)"

// missingTokens are the cells read as missing: what pandas' to_csv (""
// and, for a float column written with na_rep, "NaN") and R's write.csv
// ("NA") write for a missing value. Any other text ("None", "null",
// "n/a") is a value unless named (Options.NAValues).
var missingTokens = []string{"", "NA", "NaN"}

// legacyMissingTokens are the cells a spec recorded before missingTokens
// (Version below 2) read as missing: those pandas.read_csv reads so.
var legacyMissingTokens = []string{"", "NA", "NaN", "nan", "-NaN", "-nan", "N/A", "n/a", "NULL", "null", "None", "<NA>",
	"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "1.#IND", "1.#QNAN"}

// naSet is the set of missing-value tokens: missingTokens (or, for a
// legacy spec, legacyMissingTokens) and the user's extra ones.
type naSet map[string]bool

func newNASet(legacy bool, extra []string) naSet {
	base := missingTokens
	if legacy {
		base = legacyMissingTokens
	}
	na := naSet{}
	for _, t := range slices.Concat(base, extra) {
		na[t] = true
	}
	return na
}

// has reports whether a trimmed cell is a missing value.
func (na naSet) has(cell string) bool { return na[cell] }

// ParseNAValues reads a -na-values list: comma-separated tokens, each
// read as a missing value besides "", "NA" and "NaN".
func ParseNAValues(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			return nil, fmt.Errorf("-na-values %q: an empty token (an empty cell is missing already)", s)
		}
		out = append(out, t)
	}
	return out, nil
}

// checkMissing checks an Options.Missing value.
func checkMissing(m string) error {
	switch m {
	case "", MissingImpute, MissingRefuse, MissingError, MissingDrop:
		return nil
	}
	return fmt.Errorf("-missing %q is not %s, %s or %s", m, MissingImpute, MissingDrop, MissingRefuse)
}

// imputeMissing marks, after the training file's scan, the input columns
// whose missing values get an indicator feature (numeric) or the
// MissingCategory (categorical): those with a missing value in it.
func (sc *schema) imputeMissing(lay *layout, cols []column) {
	sc.indicators = map[string]bool{}
	for k, c := range lay.inputs {
		if cols[c].missing == 0 {
			continue
		}
		name := sc.columns[k]
		if cs, ok := sc.cats[name]; ok {
			sc.cats[name] = append(cs, MissingCategory)
		} else {
			sc.indicators[name] = true
		}
	}
}

// offsets is, per input column, the position of its first feature.
func (sc *schema) offsets() []int {
	off := make([]int, len(sc.columns))
	f := 0
	for k, c := range sc.columns {
		off[k] = f
		switch cs, ok := sc.cats[c]; {
		case ok:
			f += len(cs)
		case sc.indicators[c]:
			f += 2
		default:
			f++
		}
	}
	return off
}

// fitMedians sets the median of each numeric input column over the
// training split's rows (missing cells, NaN as read, left out) and fills
// every split's missing cells with it. A column with no value in the
// training rows (every one held out or missing) takes 0.
func (d *Data) fitMedians(sc *schema) {
	sc.medians = map[string]float64{}
	off := sc.offsets()
	for k, c := range sc.columns {
		if _, ok := sc.cats[c]; ok {
			continue
		}
		var vals []float64
		for i := range d.Train.Len() {
			if v := d.Train.floats[d.Train.rows(i)*d.Train.size+off[k]]; !math.IsNaN(float64(v)) {
				vals = append(vals, float64(v))
			}
		}
		sc.medians[c] = median(vals)
	}
	for _, s := range []*Set{d.Train, d.Valid, d.Test} {
		if s == nil {
			continue
		}
		for r := range s.rowCount() {
			for k, c := range sc.columns {
				if p := r*s.size + off[k]; math.IsNaN(float64(s.floats[p])) {
					s.floats[p] = float32(sc.medians[c])
				}
			}
		}
	}
}

// median is the median of vals (the mean of the middle two for an even
// count), 0 for none.
func median(vals []float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	slices.Sort(vals)
	n := len(vals)
	if n%2 == 1 {
		return vals[n/2]
	}
	return (vals[n/2-1] + vals[n/2]) / 2
}

// missingInput writes the features of input column k (name, at x's
// start) for a missing cell under MissingImpute: the median (NaN while
// it is not yet fitted) and an indicator of 1, or the MissingCategory.
// It returns the features written.
func (sc *schema) missingInput(k int, name string, lay *layout, x []float32) int {
	if cs := lay.cats[k]; cs != nil {
		clear(x[:len(cs)])
		if i, ok := lay.catAt[k][MissingCategory]; ok {
			x[i] = 1
		}
		return len(cs)
	}
	x[0] = float32(math.NaN())
	if m, ok := sc.medians[name]; ok {
		x[0] = float32(m)
	}
	if sc.indicators[name] {
		x[1] = 1
		return 2
	}
	return 1
}

// imputation fits the medians on the training split, fills every
// split's missing inputs, and says so; it returns what the spec records.
func (d *Data) imputation(sc *schema) (map[string]float64, []string) {
	d.fitMedians(sc)
	var indicators []string
	for _, c := range sc.columns {
		if sc.indicators[c] {
			indicators = append(indicators, c)
			d.Notes = append(d.Notes, fmt.Sprintf("column %q: missing values filled with the training median %.6g, and an input %q that is 1 where it was missing (-missing %s)",
				c, sc.medians[c], c+"/missing", MissingImpute))
		}
		if cs := sc.cats[c]; slices.Contains(cs, MissingCategory) {
			d.Notes = append(d.Notes, fmt.Sprintf("column %q: missing values are the category %q (-missing %s)", c, MissingCategory, MissingImpute))
		}
	}
	return sc.medians, indicators
}
