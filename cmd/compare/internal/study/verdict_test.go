package study

import (
	"strings"
	"testing"
)

// The verdict's arithmetic by hand: each case's means and sds are chosen
// so that the gap is just above or just below the sum of the two sds.
func TestBeyond(t *testing.T) {
	for _, c := range []struct {
		name   string
		a, o   stat
		higher bool
		want   string
	}{
		{"lower is better, ahead", stat{Mean: 0.10, SD: 0.01, N: 3}, stat{Mean: 0.125, SD: 0.01, N: 3}, false, "yes, MT-SGD ahead"},
		{"lower is better, within", stat{Mean: 0.10, SD: 0.01, N: 3}, stat{Mean: 0.115, SD: 0.01, N: 3}, false, "no, within it"},
		{"lower is better, behind", stat{Mean: 0.13, SD: 0.01, N: 3}, stat{Mean: 0.10, SD: 0.005, N: 3}, false, "yes, MT-SGD behind"},
		{"higher is better, ahead", stat{Mean: 0.96, SD: 0.002, N: 3}, stat{Mean: 0.95, SD: 0.003, N: 3}, true, "yes, MT-SGD ahead"},
		{"higher is better, behind", stat{Mean: 0.94, SD: 0.002, N: 3}, stat{Mean: 0.95, SD: 0.003, N: 3}, true, "yes, MT-SGD behind"},
		{"equal means", stat{Mean: 0.5, N: 3}, stat{Mean: 0.5, N: 3}, true, "no, within it"},
		{"one seed", stat{Mean: 0.1, N: 1}, stat{Mean: 0.5, SD: 0.01, N: 3}, false, "one seed: no spread"},
	} {
		if got := (measure{Higher: c.higher}).beyond(c.a, c.o).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The best baseline is picked per task and metric (here a different one
// for accuracy, ECE and NLL), never an MT-SGD preset, and the row shows
// the difference MT-SGD − baseline.
func TestVerdict(t *testing.T) {
	s := func(mean, sd float64) stat { return stat{Mean: mean, SD: sd, N: 3} }
	rows := []row{
		{Method: "mtsgd:authors-params", Task: "a", Accuracy: s(0.95, 0.001), ECE: s(0.010, 0.001), NLL: s(0.150, 0.002)},
		{Method: "mtsgd", Task: "a", Accuracy: s(0.99, 0.001), ECE: s(0.001, 0.001), NLL: s(0.010, 0.002)},
		{Method: "linear", Task: "a", Accuracy: s(0.96, 0.002), ECE: s(0.030, 0.002), NLL: s(0.140, 0.02)},
		{Method: "mgda", Task: "a", Accuracy: s(0.94, 0.002), ECE: s(0.020, 0.002), NLL: s(0.160, 0.02)},
		{Method: "single", Task: "a", Accuracy: s(0.93, 0.002), ECE: s(0.040, 0.002), NLL: s(0.120, 0.001)},
	}
	got := verdict([]string{"mtsgd:authors-params", "linear", "mgda", "single"}, rows)
	want := []string{
		"| mtsgd:authors-params | a | accuracy | 0.950±0.001 | 0.960±0.002 (linear) | -0.010 | yes, MT-SGD behind |",
		"| mtsgd:authors-params | a | ECE % | 1.00±0.10 | 2.00±0.20 (mgda) | -1.00 | yes, MT-SGD ahead |",
		"| mtsgd:authors-params | a | NLL | 0.150±0.002 | 0.120±0.001 (single) | +0.030 | yes, MT-SGD behind |",
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 2+len(want) {
		t.Fatalf("verdict has %d lines, want a header, a rule and %d:\n%s", len(lines), len(want), got)
	}
	for i, w := range want {
		if lines[2+i] != w {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[2+i], w)
		}
	}
	if v := verdict([]string{"linear", "mgda"}, rows[2:4]); v != "" {
		t.Errorf("a verdict without MT-SGD: %q", v)
	}
}
