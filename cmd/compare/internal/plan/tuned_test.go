package plan

import (
	"math"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

// The choice by hand on made-up search runs: the lowest criterion wins;
// within the tie tolerance the lower rate wins, whatever the order; a
// diverged run never wins; all diverged is an error.
func TestChoose(t *testing.T) {
	run := func(lr, crit float64, scale string) searched {
		sc, err := experiment.ParseScoreScale(scale)
		if err != nil {
			t.Fatal(err)
		}
		return searched{Candidate: Candidate{LR: lr, ScoreScale: sc}, Criterion: crit}
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		runs []searched
		want Candidate
	}{
		{"lowest", []searched{run(1e-3, 0.5, ""), run(1e-2, 0.3, ""), run(3e-2, 0.4, "")}, Candidate{LR: 1e-2}},
		{"tie goes to the lower rate", []searched{run(1e-3, 0.30009, ""), run(1e-2, 0.3, "")}, Candidate{LR: 1e-3}},
		{"just outside the tie", []searched{run(1e-3, 0.30011, ""), run(1e-2, 0.3, "")}, Candidate{LR: 1e-2}},
		{"diverged never", []searched{run(1e-3, 0.9, ""), run(1e-2, inf, "")}, Candidate{LR: 1e-3}},
		{"tie across scales: lower rate, then first scale",
			[]searched{run(1e-2, 0.3, "mean"), run(3e-3, 0.3, "normalized"), run(3e-3, 0.3, "mean")},
			Candidate{LR: 3e-3, ScoreScale: experiment.ScaleNormalized}},
	} {
		got, err := choose(tc.runs)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := choose([]searched{run(1e-3, inf, ""), run(1e-2, inf, "")}); err == nil {
		t.Error("every run diverged: no error")
	}
}

// The criterion is the mean validation NLL over tasks of the last epoch
// (MSE for regression), and reads no test line.
func TestCriterion(t *testing.T) {
	cls := func(epoch int, split, task string, nll float64) experiment.MetricsLine {
		return experiment.MetricsLine{Epoch: epoch, Split: split, Task: task,
			Score: metrics.Score{Classification: &metrics.Classification{NLL: nll}}}
	}
	h := []experiment.MetricsLine{
		cls(1, "valid", "a", 9), cls(1, "valid", "b", 9), cls(1, "test", "a", 9), cls(1, "test", "b", 9),
		cls(2, "valid", "a", 0.2), cls(2, "valid", "b", 0.4), cls(2, "test", "a", 0.01), cls(2, "test", "b", 0.01),
	}
	got, lines, err := criterion(h)
	if err != nil || math.Abs(got-0.3) > 1e-15 || len(lines) != 2 {
		t.Errorf("criterion %v (%d lines), %v; want 0.3 from 2 lines", got, len(lines), err)
	}
	reg := []experiment.MetricsLine{{Epoch: 1, Split: "valid", Task: "t", Score: metrics.Score{Regression: &metrics.Regression{MSE: 2}}}}
	if got, _, err := criterion(reg); err != nil || got != 2 {
		t.Errorf("regression criterion %v, %v; want 2", got, err)
	}
	if _, _, err := criterion(h[2:4]); err == nil {
		t.Error("test lines alone gave a criterion")
	}
}
