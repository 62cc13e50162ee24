package experiment

import (
	"strings"
	"testing"
)

// single: no shared trunk; each task's network along its own score.
func init() {
	stepCases["single"] = methodCase{
		declares: declared{compared: true},
		direction: func(t *testing.T, o *oneStep) ([][]float64, [][][]float64) {
			if len(o.trunks[0]) != 0 {
				t.Fatalf("single has a shared trunk of %d parameters", len(o.trunks[0]))
			}
			return o.trunkMix(nil), o.ownHeadScores()
		},
	}
}

// With -single-task J the network is shared and trained on task J alone:
// its trunks move along task J's score only (weight 1, the other task's
// 0), every head along its own task's score, within 1e-9 as in
// TestOneStepPerMethod; a trunk moved by both tasks' scores would fail.
func TestSingleTaskStep(t *testing.T) {
	for _, j := range []int{1, 2} {
		o := stepOnce(t, "single", map[string]float64{singleTaskParam: float64(j)})
		if len(o.trunks[0]) == 0 {
			t.Fatalf("-single-task %d: no shared trunk", j)
		}
		trunk := o.trunkMix(func(_, task int) float64 {
			if task == j-1 {
				return 1
			}
			return 0
		})
		o.check(t, trunk, o.ownHeadScores())
	}
}

// -single-task names a task the run has by a whole number; each refusal
// names the flag, before the data load where the task count is known
// from the settings alone, and once the data have loaded.
func TestSingleTaskRefused(t *testing.T) {
	for _, tc := range []struct {
		task float64
		want string
	}{
		{3, "-single-task 3: the run has tasks 1 to 2"},
		{1.5, "-single-task 1.5: a task is numbered by a whole number"},
		{-1, "-single-task: must be in [0, 1.048576e+06], got -1"},
	} {
		s := testSettings(1)
		s.Method, s.MethodParams = "single", map[string]float64{singleTaskParam: tc.task}
		_, err := New(s, Data{Train: train, Test: test}, 2)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-single-task %v: %v, want %q", tc.task, err, tc.want)
		}
	}
	s := Defaults("celeba").ForMethod("single")
	s.Tasks, s.MethodParams = "40", map[string]float64{singleTaskParam: 41}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "-single-task 41: the run has tasks 1 to 40") {
		t.Errorf("celeba -tasks 40 -single-task 41 before the data load: %v", err)
	}
	s.MethodParams[singleTaskParam] = 40
	if err := s.Check(); err != nil {
		t.Errorf("celeba -tasks 40 -single-task 40: %v", err)
	}
}
