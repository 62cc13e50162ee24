package plan

import (
	"slices"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

// runLines are a run's lines on tasks a, b and c, each line's accuracy
// tag plus the task's index (from 0) over 10, so that a folded line shows
// which run and task it came from.
func runLines(tag float64) []experiment.MetricsLine {
	var lines []experiment.MetricsLine
	for _, split := range []string{"valid", "test"} {
		for i, task := range []string{"a", "b", "c"} {
			lines = append(lines, experiment.MetricsLine{Split: split, Task: task,
				Score: metrics.Score{Classification: &metrics.Classification{Accuracy: tag + float64(i)/10}}})
		}
	}
	return lines
}

// The runs single@task=J fold into one method, single, whose lines for
// task J are run J's, seed by seed, in the comparison's order of methods;
// run J's other tasks are dropped; a row also run as a method of its own
// stays unfolded; specs with other options keep them.
func TestFoldSingleTask(t *testing.T) {
	results := map[string][][]experiment.MetricsLine{
		"mtsgd":                {runLines(100)},
		SingleTaskSpec(1):      {runLines(1), runLines(11)},
		SingleTaskSpec(3):      {runLines(3)},
		"single@task=2@lr=0.1": {runLines(2)},
	}
	methods := []string{"mtsgd", SingleTaskSpec(1), SingleTaskSpec(3), "single@task=2@lr=0.1"}
	got := foldSingleTask(methods, results)
	if want := []string{"mtsgd", "single", "single@lr=0.1"}; !slices.Equal(got, want) {
		t.Fatalf("methods %v, want %v", got, want)
	}
	if len(results) != 3 || len(results["mtsgd"][0]) != 6 {
		t.Fatalf("results %v", results)
	}
	tagged := func(lines []experiment.MetricsLine) []float64 {
		var accs []float64
		for _, l := range lines {
			accs = append(accs, l.Accuracy)
		}
		return accs
	}
	for _, c := range []struct {
		method string
		seed   int
		want   []float64 // the accuracies: the run's tag plus its task's index over 10
	}{
		{"single", 0, []float64{1, 1, 3.2, 3.2}},  // run 1's task a, run 3's task c, both splits
		{"single", 1, []float64{11, 11}},          // seed 2: only run 1 has it
		{"single@lr=0.1", 0, []float64{2.1, 2.1}}, // run 2's task b
	} {
		if got := tagged(results[c.method][c.seed]); !slices.Equal(got, c.want) {
			t.Errorf("%s seed %d: %v, want %v", c.method, c.seed, got, c.want)
		}
	}

	both := map[string][][]experiment.MetricsLine{"single": {runLines(0)}, SingleTaskSpec(2): {runLines(2)}}
	if got := foldSingleTask([]string{"single", SingleTaskSpec(2)}, both); !slices.Equal(got, []string{"single", SingleTaskSpec(2)}) || len(both) != 2 {
		t.Errorf("single run as a method too: methods %v, %d results", got, len(both))
	}
}
