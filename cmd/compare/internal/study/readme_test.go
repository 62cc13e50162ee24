package study

import (
	"strings"
	"testing"
)

// Rates print as the READMEs write them: the paper's 1e-3 in exponent
// form, the tuned ones as decimals.
func TestRateLabel(t *testing.T) {
	for _, c := range []struct {
		lr   float64
		want string
	}{{0.001, "1e-3"}, {0.0003, "3e-4"}, {2.5e-5, "2.5e-5"}, {0.01, "0.01"}, {0.1, "0.1"}, {1, "1"}} {
		if got := rateLabel(c.lr); got != c.want {
			t.Errorf("rateLabel(%v) = %q, want %q", c.lr, got, c.want)
		}
	}
}

// A method spec's name in prose is its method's registered title, with a
// preset other than the default in brackets.
func TestTitle(t *testing.T) {
	for _, c := range []struct {
		m    Method
		want string
	}{
		{Method{Name: "mtsgd", Preset: "authors-params"}, "MT-SGD"},
		{Method{Name: "mtsgd", Preset: "paper"}, "MT-SGD (paper)"},
		{Method{Name: "linear"}, "linear"},
		{Method{Name: "pareto-mtl", LR: 0.1}, "Pareto MTL"},
	} {
		if got := title(c.m); got != c.want {
			t.Errorf("title(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
}

// The READMEs' verdict table has a row per metric and a column per
// checkpoint and task, each cell the difference and the verdict in a
// word, minus signs as "−"; a cell judged at last/ but not at best/ is
// left empty.
func TestVerdictTable(t *testing.T) {
	s := func(mean, sd float64, n int) stat { return stat{Mean: mean, SD: sd, N: n} }
	acc, nll := measure{Name: "accuracy", Higher: true, Scale: 1, Digits: 4}, measure{Name: "NLL", Scale: 1, Digits: 4}
	v := verdictSet{
		Last: []judgement{
			{Task: "a", Measure: acc, Mine: s(0.95, 0.001, 3), Other: s(0.96, 0.001, 3), OtherMethod: "linear"},
			{Task: "a", Measure: nll, Mine: s(0.10, 0.01, 3), Other: s(0.11, 0.01, 3), OtherMethod: "linear"},
			{Task: "b", Measure: acc, Mine: s(0.90, 0, 1), Other: s(0.91, 0.001, 3), OtherMethod: "mgda"},
		},
		Best: []judgement{{Task: "b", Measure: acc, Mine: s(0.90, 0.01, 3), Other: s(0.91, 0.01, 3), OtherMethod: "mgda"}},
	}
	want := strings.Join([]string{
		"| metric | last/ a | last/ b | best/ a | best/ b |",
		"|---|---|---|---|---|",
		"| accuracy | −0.0100 behind | −0.0100 one seed |  | −0.0100 within |",
		"| NLL | −0.0100 within |  |  |  |",
	}, "\n") + "\n"
	if got := verdictTable(v); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
