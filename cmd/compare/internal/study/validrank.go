package study

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
)

// validNLLTable ranks the study's methods by their validation NLL after
// the last epoch, lowest first: each run's mean over its tasks, then the
// mean ± sample sd over the seeds. It is the figure by which the study
// picks the methods that get more seeds, so that no choice reads a test
// figure. A run that has not reached epochs, or has no validation lines,
// is left out; "" where no run is left.
func validNLLTable(specs []string, histories map[string][][]experiment.MetricsLine, epochs int) string {
	type ranked struct {
		spec string
		nll  stat
	}
	var rows []ranked
	for _, spec := range specs {
		var perRun []float64
		for _, h := range histories[spec] {
			if v, ok := lastValidNLL(h, epochs); ok {
				perRun = append(perRun, v)
			}
		}
		if len(perRun) > 0 {
			rows = append(rows, ranked{spec, newStat(perRun)})
		}
	}
	if len(rows) == 0 {
		return ""
	}
	slices.SortStableFunc(rows, func(a, b ranked) int {
		switch {
		case a.nll.Mean < b.nll.Mean:
			return -1
		case a.nll.Mean > b.nll.Mean:
			return 1
		}
		return 0
	})
	var b strings.Builder
	fmt.Fprintf(&b, "## Validation NLL after epoch %d, lowest first\n\n", epochs)
	b.WriteString("Each run's NLL on the validation split after its last epoch, mean over the tasks, then mean ± sample sd over the seeds: " +
		"the figure that picks the methods given more seeds, never a test figure.\n\n")
	b.WriteString("| rank | method | seeds | validation NLL |\n|---|---|---|---|\n")
	for i, r := range rows {
		text := r.nll.meanText(1, 4)
		if r.nll.N > 1 {
			text += fmt.Sprintf("±%.4f", r.nll.SD)
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %s |\n", i+1, r.spec, r.nll.N, text)
	}
	return b.String() + "\n"
}

// lastValidNLL is the mean over the tasks of a history's validation NLL
// at epoch epochs; ok false where the history has none there.
func lastValidNLL(history []experiment.MetricsLine, epochs int) (float64, bool) {
	var sum float64
	n := 0
	for _, l := range history {
		if l.Epoch == epochs && l.Split == "valid" && l.Classification != nil {
			sum += l.NLL
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
