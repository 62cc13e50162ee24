package experiment

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/particles"
)

// singleTaskParam is single's parameter (-single-task, @task= in
// compare's specs) that names the one task a run trains, 1 to the number
// of tasks; 0, its default, trains every task side by side.
const singleTaskParam = "task"

// singleMethod is the single-task baseline: each task learnt by a network
// of its own.
//
// By default one run trains every task side by side: a whole network per
// task and particle, nothing shared (models.Independent), each moved by
// its own task's score. That cannot hold a network with batch
// normalisation, whose running statistics belong to a shared trunk, and
// forty copies of a large trunk would not fit in memory; so with
// -single-task J a run trains the ordinary network on task J alone: its
// trunk follows task J's score (particles.Linear with weight 1 on task J,
// 0 on the others), as does head J. One such run per task makes the
// baseline: run J's figures for task J are that task's single-task
// result. Its other heads follow their own scores on features they do not
// shape, so its other figures measure nothing of the baseline (compare
// folds the runs single@task=J into one single-task row).
var singleMethod = Method{
	Name:        "single",
	Title:       "single-task",
	Help:        "no shared trunk: one whole network per task and particle, each following its own task's score; with -single-task J, the network trained on task J alone (one run per task)",
	Trunk:       singleTaskTrunk,
	Independent: func(s Settings) bool { return s.MethodParams[singleTaskParam] == 0 },
	Heads:       ownScore,
	Params: []Param{{Name: singleTaskParam, Default: 0, Min: 0, Max: 1 << 20,
		Help: "train the network on this task alone, 1 to the number of tasks, one run per task (0: every task a whole network of its own, side by side)"}},
	Fits:     singleTaskFits,
	Compared: true,
}

// singleTaskTrunk moves the trunks along the named task's score alone.
func singleTaskTrunk(p RuleParams) (particles.Rule, error) {
	j := int(p.Param(singleTaskParam, 0))
	if j < 1 || j > p.Tasks {
		return nil, fmt.Errorf("-single-task %d: the run has tasks 1 to %d", j, p.Tasks)
	}
	w := make([]float64, p.Tasks)
	w[j-1] = 1
	return &particles.Linear{Weights: w}, nil
}

// singleTaskFits refuses a task that is not a whole number or that the
// run does not have.
func singleTaskFits(s Settings, tasks int) error {
	v := s.MethodParams[singleTaskParam]
	switch {
	case v != math.Trunc(v):
		return fmt.Errorf("-single-task %v: a task is numbered by a whole number, 1 to the number of tasks", v)
	case tasks > 0 && int(v) > tasks:
		return fmt.Errorf("-single-task %v: the run has tasks 1 to %d", v, tasks)
	}
	return nil
}

// oneTaskHint is what an error about independent networks adds for a
// method that can train one task at a time instead.
func oneTaskHint(m Method) string {
	if _, ok := m.Param(singleTaskParam); !ok || m.Name != singleMethod.Name {
		return ""
	}
	return fmt.Sprintf("; -%s-%s J trains the network on task J alone, one run per task", m.Name, singleTaskParam)
}
