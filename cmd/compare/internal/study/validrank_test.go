package study

import (
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

// nllRun is a history of two tasks whose validation NLL after epoch is a
// and b, and whose test NLL is 0 (a table that read test lines would
// rank by it).
func nllRun(epoch int, a, b float64) []experiment.MetricsLine {
	line := func(split, task string, nll float64) experiment.MetricsLine {
		return experiment.MetricsLine{Epoch: epoch, Split: split, Task: task, Score: metrics.Score{Classification: &metrics.Classification{NLL: nll}}}
	}
	return []experiment.MetricsLine{line("valid", "l", a), line("valid", "r", b), line("test", "l", 0), line("test", "r", 0)}
}

// Methods rank by the mean over seeds of each run's mean validation NLL
// over its tasks, lowest first: b's runs have (0.05 + 0.15)/2 = 0.1 and
// (0.1 + 0.2)/2 = 0.15, mean 0.125, sd 0.0354 (√(2·0.025²)); a's one run
// 0.2; c's run stopped before the last epoch and is left out.
func TestValidNLLTable(t *testing.T) {
	histories := map[string][][]experiment.MetricsLine{
		"a": {nllRun(100, 0.1, 0.3)},
		"b": {nllRun(100, 0.05, 0.15), nllRun(100, 0.1, 0.2)},
		"c": {nllRun(99, 0.01, 0.01)},
	}
	got := validNLLTable([]string{"a", "b", "c"}, histories, 100)
	for _, want := range []string{"| 1 | b | 2 | 0.1250±0.0354 |\n| 2 | a | 1 | 0.2000 |\n", "after epoch 100"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| c |") {
		t.Errorf("an unfinished run ranked:\n%s", got)
	}
	if got := validNLLTable([]string{"c"}, histories, 100); got != "" {
		t.Errorf("no finished run: %q", got)
	}
}
