package experiment

import (
	"math/bits"
	"strconv"
	"strings"
)

// A new run on a user's table (vector inputs, -model mlp, no -hidden)
// gets an MLP sized to the table (TableHidden) rather than always the
// SARCOS MLP (MLPHidden). On a mid-size table most of a step's arithmetic
// is the hidden layers', and two layers as wide as the input (128 at
// least, 256 at most) train a 10⁴-row table in a quarter of the CPU time of
// three of 256, with the same test scores (docs/own-data.md#models). A
// small table trains in seconds either way, and in its few steps (one an
// epoch for 150 rows at batch 128) three wide layers fit it better
// (wine: test NLL 0.003-0.02 with three, 0.03-0.04 with two), so it
// keeps them, as does a large one.

// Rows bounding the two-layer MLP of TableHidden.
const (
	TableHiddenFrom = 5_000
	TableHiddenTo   = 100_000
)

// TableHidden is the hidden layer widths for a table of rows training
// examples and features input features: from TableHiddenFrom rows up to
// TableHiddenTo, two layers of the features rounded up to a power of
// two, from 128 to 256; MLPHidden otherwise.
func TableHidden(rows, features int) []int {
	if rows < TableHiddenFrom || rows >= TableHiddenTo {
		return MLPHidden
	}
	width := min(256, max(128, 1<<bits.Len(uint(max(features-1, 1)))))
	return []int{width, width}
}

// sizeToTable sets an unset Hidden of a new run's MLP on vector inputs
// to TableHidden, so that the checkpoint records it.
func (s *Settings) sizeToTable(rows int, shape []int) {
	if s.Model != "mlp" || s.Hidden != "" || len(shape) != 1 {
		return
	}
	var ws []string
	for _, w := range TableHidden(rows, shape[0]) {
		ws = append(ws, strconv.Itoa(w))
	}
	s.Hidden = strings.Join(ws, ",")
}
