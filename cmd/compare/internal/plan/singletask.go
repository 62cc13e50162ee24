package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/experiment"
)

// SingleTaskSpec is the method spec of the single-task run that trains
// task j (1 to the number of tasks) alone: experiment's single with its
// task parameter.
func SingleTaskSpec(j int) string { return fmt.Sprintf("single@task=%d", j) }

// singleTaskOf returns the task a spec such as single@task=J trains
// alone, and the spec without its @task=J: the row the runs of every task
// make together.
func singleTaskOf(spec string) (task int, row string, ok bool) {
	m, err := parseSpec(spec)
	if err != nil || m.Name != "single" || m.Params["task"] < 1 {
		return 0, "", false
	}
	parts := strings.Split(spec, "@")
	kept := parts[:1]
	for _, opt := range parts[1:] {
		if !strings.HasPrefix(opt, "task=") {
			kept = append(kept, opt)
		}
	}
	return int(m.Params["task"]), strings.Join(kept, "@"), true
}

// foldSingleTask makes one method of the single-task runs: the runs
// single@task=J, each trained on task J alone, become one row (the spec
// without @task=J) whose figures for task J are run J's, seed by seed.
// A run's other tasks, whose heads sat on a trunk they did not shape, are
// dropped. Task J is the J-th task in the order of the run's lines, the
// run's own. A row whose name is also a method of the comparison is left
// unfolded. runs are the per-method per-seed lines of Aggregate: results
// and histories, each folded the same way.
func foldSingleTask(methods []string, runs ...map[string][][]experiment.MetricsLine) []string {
	var folded []string
	rowOf := map[string]string{}
	for _, m := range methods {
		_, row, ok := singleTaskOf(m)
		switch {
		case ok && !slices.Contains(methods, row):
			rowOf[m] = row
			if !slices.Contains(folded, row) {
				folded = append(folded, row)
			}
		default:
			folded = append(folded, m)
		}
	}
	for _, byMethod := range runs {
		for _, m := range methods {
			row, ok := rowOf[m]
			if !ok {
				continue
			}
			task, _, _ := singleTaskOf(m)
			for seed, lines := range byMethod[m] {
				for len(byMethod[row]) <= seed {
					byMethod[row] = append(byMethod[row], nil)
				}
				byMethod[row][seed] = append(byMethod[row][seed], linesOfTask(lines, task)...)
			}
			delete(byMethod, m)
		}
	}
	return folded
}

// linesOfTask are the lines of the j-th task (from 1) in the order the
// lines name the tasks.
func linesOfTask(lines []experiment.MetricsLine, j int) []experiment.MetricsLine {
	var tasks []string
	for _, l := range lines {
		if !slices.Contains(tasks, l.Task) {
			tasks = append(tasks, l.Task)
		}
	}
	if j > len(tasks) {
		return nil
	}
	var kept []experiment.MetricsLine
	for _, l := range lines {
		if l.Task == tasks[j-1] {
			kept = append(kept, l)
		}
	}
	return kept
}
