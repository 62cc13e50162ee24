package study

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

// Δm by hand from its definition (deltam.go), to 1e-12:
//   - accuracies 0.90 / 0.80 against single's 0.95 / 0.85:
//     ((0.90−0.95)/0.95 + (0.80−0.85)/0.85)/2 × 100 = −5.572755417956…;
//   - MSEs 0.5 / 2.0 against 0.4 / 2.5, lower better so the sign turns:
//     (−0.1/0.4 + 0.5/2.5)/2 × 100 = (−0.25 + 0.2)/2 × 100 = −2.5;
//   - accuracy 0.9 against 0.8 and MSE 1 against 2:
//     (0.1/0.8 + 1/2)/2 × 100 = (0.125 + 0.5)/2 × 100 = 31.25;
//   - single against itself: 0.
//
// Undefined where the tasks differ, the baseline has none, or a baseline
// metric is 0.
func TestDeltaM(t *testing.T) {
	acc := func(task string, v float64) taskPrimary { return taskPrimary{Task: task, Mean: v} }
	mse := func(task string, v float64) taskPrimary { return taskPrimary{Task: task, Mean: v, Lower: true} }
	single := []taskPrimary{acc("a", 0.95), acc("b", 0.85)}
	for _, c := range []struct {
		name         string
		mine, single []taskPrimary
		want         float64
		ok           bool
	}{
		{"accuracy", []taskPrimary{acc("a", 0.90), acc("b", 0.80)}, single, -5.572755417956656, true},
		{"accuracy, tasks in another order", []taskPrimary{acc("b", 0.80), acc("a", 0.90)}, single, -5.572755417956656, true},
		{"MSE", []taskPrimary{mse("a", 0.5), mse("b", 2.0)}, []taskPrimary{mse("a", 0.4), mse("b", 2.5)}, -2.5, true},
		{"accuracy and MSE", []taskPrimary{acc("a", 0.9), mse("b", 1)}, []taskPrimary{acc("a", 0.8), mse("b", 2)}, 31.25, true},
		{"single itself", single, single, 0, true},
		{"no baseline", []taskPrimary{acc("a", 0.9)}, nil, 0, false},
		{"no tasks", nil, single, 0, false},
		{"a task the baseline lacks", []taskPrimary{acc("a", 0.9), acc("c", 0.8)}, single, 0, false},
		{"fewer tasks than the baseline", []taskPrimary{acc("a", 0.9)}, single, 0, false},
		{"another kind of metric", []taskPrimary{acc("a", 0.9), mse("b", 0.8)}, single, 0, false},
		{"a baseline of 0", []taskPrimary{mse("a", 0.1)}, []taskPrimary{mse("a", 0)}, 0, false},
	} {
		got, ok := deltaM(c.mine, c.single)
		if ok != c.ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Δm %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// A Δm table has a row per method spec with figures and a column per
// checkpoint: two decimals, single at 0.00, "—" where a column lacks the
// method; without single every cell is "—" and a note under the table
// says why.
func TestDeltaMTable(t *testing.T) {
	last := map[string][]taskPrimary{
		"mtsgd":  {{Task: "a", Mean: 0.90}, {Task: "b", Mean: 0.80}},
		"single": {{Task: "a", Mean: 0.95}, {Task: "b", Mean: 0.85}},
	}
	best := map[string][]taskPrimary{"single": last["single"]}
	got := deltaMTable([]string{"mtsgd", "linear", "single"}, []deltaMColumn{{"last", last}, {"best", best}})
	want := "| method | last | best |\n|---|---|---|\n| mtsgd | -5.57 | — |\n| single | 0.00 | 0.00 |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	delete(last, "single")
	got = deltaMTable([]string{"mtsgd", "single"}, []deltaMColumn{{"last", last}})
	want = "| method | last |\n|---|---|\n| mtsgd | — |\n\n" + noSingleTaskNote
	if got != want {
		t.Errorf("without single: got\n%s\nwant\n%s", got, want)
	}
}

// A comparison's files carry Δm % from the seeds' mean accuracies:
// compare.md a table of it under the main one, compare.csv a column,
// summary.md a column; the method's two seeds average to 0.90 / 0.80
// against single's 0.95 / 0.85, Δm −5.57 (TestDeltaM). Without single
// the cells are "—" and compare.md and summary.md say why.
func TestComparisonDeltaM(t *testing.T) {
	line := func(task string, acc float64) experiment.MetricsLine {
		return experiment.MetricsLine{Epoch: 1, Split: "test", Task: task, Seconds: 60,
			Score: metrics.Score{Classification: &metrics.Classification{Accuracy: acc, Brier: 0.1, ECE: 0.02, NLL: 0.2}}}
	}
	results := map[string][][]experiment.MetricsLine{
		"linear": {{line("top-left", 0.89), line("bottom-right", 0.79)}, {line("top-left", 0.91), line("bottom-right", 0.81)}},
		"single": {{line("top-left", 0.95), line("bottom-right", 0.85)}},
	}
	c := Comparison{Dataset: "multi-mnist", Methods: []string{"linear", "single"}, Chosen: map[string]string{"linear": "lr 0.1", "single": "lr 0.1"}}
	read := func(dir, name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	dir := t.TempDir()
	if err := WriteComparison(dir, c, results, "", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ file, text string }{
		{"compare.md", "| method | " + deltaMHead + " |\n|---|---|\n| linear | -5.57 |\n| single | 0.00 |\n"},
		{"compare.csv", ",mse_sd,delta_m_percent,chosen,seconds_per_epoch\n"},
		{"compare.csv", "linear,top-left,2,"},
		{"compare.csv", ",,,-5.57276,\"lr 0.1\",60.00\n"},
		{"compare.csv", ",,,0,\"lr 0.1\",60.00\n"},
		{SummaryFile, " Δm % | s/epoch |\n"},
		{SummaryFile, " | -5.57 | 60 |\n"},
		{SummaryFile, " | 0.00 | 60 |\n"},
	} {
		if got := read(dir, want.file); !strings.Contains(got, want.text) {
			t.Errorf("%s lacks %q:\n%s", want.file, want.text, got)
		}
	}
	for _, file := range []string{"compare.md", SummaryFile} {
		if got := read(dir, file); strings.Contains(got, noSingleTaskNote) {
			t.Errorf("%s has single yet says it has not:\n%s", file, got)
		}
	}

	delete(results, "single")
	dir = t.TempDir()
	if err := WriteComparison(dir, c, results, "", &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ file, text string }{
		{"compare.md", "| linear | — |\n\n" + noSingleTaskNote},
		{"compare.csv", ",,,,\"lr 0.1\",60.00\n"},
		{SummaryFile, " | — | 60 |\n\n" + noSingleTaskNote},
	} {
		if got := read(dir, want.file); !strings.Contains(got, want.text) {
			t.Errorf("without single, %s lacks %q:\n%s", want.file, want.text, got)
		}
	}
}
