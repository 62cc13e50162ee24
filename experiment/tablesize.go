package experiment

import (
	"strconv"
	"strings"
)

// A new run on a user's table (vector inputs, -model mlp, no -hidden)
// gets an MLP sized to the table's training rows (TableHidden) rather
// than always the SARCOS MLP (MLPHidden). On a mid-size table most of a
// step's arithmetic is the 256×256 layers', and two hidden layers train
// a 10⁴-row table in about half the time of three with the same test
// scores (docs/own-data.md#models); a small table trains in seconds
// either way, and in its few steps (one an epoch for 150 rows) three
// layers fit it better (wine: test NLL 0.003-0.02 with three, 0.03-0.04
// with two), so it keeps three, as does a large one.

// Rows bounding the two-layer MLP of TableHidden.
const (
	TableHiddenFrom = 5_000
	TableHiddenTo   = 100_000
)

// TableHidden is the hidden layer widths for a table of rows training
// examples: two layers of 256 from TableHiddenFrom rows up to
// TableHiddenTo, MLPHidden otherwise.
func TableHidden(rows int) []int {
	if rows >= TableHiddenFrom && rows < TableHiddenTo {
		return []int{256, 256}
	}
	return MLPHidden
}

// sizeToTable sets an unset Hidden of a new run's MLP on vector inputs
// to TableHidden, so that the checkpoint records it.
func (s *Settings) sizeToTable(rows int, shape []int) {
	if s.Model != "mlp" || s.Hidden != "" || len(shape) != 1 {
		return
	}
	var ws []string
	for _, w := range TableHidden(rows) {
		ws = append(ws, strconv.Itoa(w))
	}
	s.Hidden = strings.Join(ws, ",")
}
