package study

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

// Mean and sample standard deviation, by hand: 0.8 and 0.9 give 0.85 and
// √(2·0.05²/1) = 0.0707107.
func TestStat(t *testing.T) {
	s := newStat([]float64{0.8, 0.9})
	if math.Abs(s.Mean-0.85) > 1e-15 || math.Abs(s.SD-0.07071067811865477) > 1e-15 || s.String() != "0.8500 ± 0.0707" {
		t.Errorf("stat %+v, %q", s, s)
	}
	if one := newStat([]float64{0.5}); one.SD != 0 || one.String() != "0.5000" {
		t.Errorf("one seed: %+v %q", one, one)
	}
}

func TestSummarise(t *testing.T) {
	line := func(task string, acc, secs float64) experiment.MetricsLine {
		return experiment.MetricsLine{Epoch: 2, Split: "test", Task: task, Seconds: secs,
			Score: metrics.Score{Classification: &metrics.Classification{Accuracy: acc, Brier: 1 - acc, ECE: 0.1}}}
	}
	rows := summarise([]string{"mtsgd"}, map[string][][]experiment.MetricsLine{
		"mtsgd": {{line("a", 0.8, 100), line("b", 0.7, 100)}, {line("a", 0.9, 120), line("b", 0.7, 120)}},
	})
	if len(rows) != 2 || rows[0].Task != "a" || math.Abs(rows[0].Accuracy.Mean-0.85) > 1e-15 || rows[1].Accuracy.SD > 1e-15 || rows[0].SecondsPerEpoch != 55 {
		t.Errorf("rows %+v", rows)
	}
	// Runs with other tasks, in other orders (single-task runs folded into
	// one method, some unfinished): each task's row is over the runs that
	// have it, matched by name.
	rows = summarise([]string{"single"}, map[string][][]experiment.MetricsLine{
		"single": {{line("a", 0.8, 100), line("b", 0.6, 100)}, {line("b", 0.7, 100)}, {line("c", 0.5, 100)}},
	})
	if len(rows) != 3 || rows[0].Task != "a" || rows[0].Seeds != 1 || rows[1].Task != "b" || rows[1].Seeds != 2 ||
		math.Abs(rows[1].Accuracy.Mean-0.65) > 1e-15 || rows[2].Task != "c" || rows[2].Seeds != 1 || rows[2].Accuracy.Mean != 0.5 {
		t.Errorf("runs of other tasks: rows %+v", rows)
	}
}

// The table puts the paper's figures beside ours: its Table 2 ECE for
// every method it reports (MT-SGD on Multi-MNIST: 3.28 and 4.00), its
// accuracy where one is read off its chart, a dash where it has none; the
// chart is a PNG with one column of panels per task.
func TestMarkdownAndChart(t *testing.T) {
	line := func(task string, acc, ece float64) experiment.MetricsLine {
		return experiment.MetricsLine{Epoch: 1, Split: "test", Task: task, Seconds: 60,
			Score: metrics.Score{Classification: &metrics.Classification{Accuracy: acc, Brier: 0.1, ECE: ece, NLL: 0.2}}}
	}
	methods := []string{"mtsgd:authors", "single"}
	rows := summarise(methods, map[string][][]experiment.MetricsLine{
		"mtsgd:authors": {{line("top-left", 0.95, 0.0321), line("bottom-right", 0.94, 0.05)}},
		"single":        {{line("top-left", 0.93, 0.02), line("bottom-right", 0.92, 0.03)}},
	})
	md := markdown("multi-mnist", rows, nil)
	for _, want := range []string{
		"| mtsgd:authors | top-left | 0.9500 | ≈0.96 | 3.21 | 3.28 | 0.1000 | 0.2000 | 60 |",
		"| mtsgd:authors | bottom-right | 0.9400 | ≈0.95 | 5.00 | 4.00 |",
		"| single | top-left | 0.9300 | — | 2.00 | — |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if f, ok := paper("multi-fashion", "moo-svgd", "bottom-right"); !ok || f.ECE != 6.11 || !math.IsNaN(f.Accuracy) {
		t.Errorf("paper's Multi-Fashion MOO-SVGD bottom-right: %+v, %v", f, ok)
	}
	var b bytes.Buffer
	if err := writeChart(&b, "multi-mnist", methods, rows); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w <= h {
		t.Errorf("chart is %d×%d, want two columns of panels, wider than tall", w, h)
	}
}
