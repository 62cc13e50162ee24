package curves

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// history is epochs of two tasks on the valid and test splits, with two
// particles.
func history(epochs int, acc float64) []experiment.MetricsLine {
	var h []experiment.MetricsLine
	score := func(a float64) metrics.Score {
		return metrics.Score{Classification: &metrics.Classification{Accuracy: a, ECE: 1 - a}}
	}
	for e := 1; e <= epochs; e++ {
		for _, split := range []string{"valid", "test"} {
			for _, task := range []string{"top-left", "bottom-right"} {
				a := acc * float64(e) / float64(epochs)
				h = append(h, experiment.MetricsLine{Epoch: e, Split: split, Task: task, Loss: 1 / float64(e), Score: score(a),
					Particles: []metrics.Score{score(a - 0.05), score(a - 0.1)}, ParticleLoss: []float64{1.1 / float64(e), 0.9 / float64(e)}})
			}
		}
	}
	return h
}

// A run's chart has a row per task and three panels in it (loss,
// accuracy, ECE): wider than tall; it is written whole to its path. A
// single epoch draws too.
func TestRun(t *testing.T) {
	for _, epochs := range []int{1, 4} {
		path := filepath.Join(t.TempDir(), FileName)
		if err := WriteRun(path, history(epochs, 0.9)); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w <= h {
			t.Errorf("%d epochs: chart %d×%d, want 3 columns of panels over 2 rows", epochs, w, h)
		}
	}
	if err := Run(&bytes.Buffer{}, nil); err == nil {
		t.Error("an empty history drew")
	}
}

// The methods' chart takes the mean and sample deviation over seeds, and
// draws a method with no finished run as absent.
func TestMethods(t *testing.T) {
	if m, sd := meanSD([]float64{0.8, 0.9}); math.Abs(m-0.85) > 1e-15 || sd < 0.0707106 || sd > 0.0707107 {
		t.Errorf("meanSD %v %v", m, sd)
	}
	var b bytes.Buffer
	err := Methods(&b, "multi-mnist", []string{"linear", "single", "mgda"}, map[string][][]experiment.MetricsLine{
		"linear": {history(3, 0.9), history(3, 0.8)},
		"single": {history(3, 0.7)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&b); err != nil {
		t.Fatal(err)
	}
	if err := Methods(&bytes.Buffer{}, "multi-mnist", []string{"mgda"}, nil); err == nil {
		t.Error("no runs drew")
	}
}

// After roomForLegend, the legend at the top of a panel lies above the
// highest point of every curve, however many entries it has (up to half
// the panel), and the panel's lower bound is kept.
func TestLegendAboveCurves(t *testing.T) {
	for _, entries := range []int{1, 3, 6} {
		p := plot.New()
		for k := range entries {
			// Rising curves that end at the top right, where a legend sits.
			xy := plotter.XYs{{X: 0, Y: 0.2}, {X: 5, Y: 0.9 + 0.01*float64(k)}, {X: 10, Y: 0.97}}
			if err := addLine(p, xy, color.Black, 1, fmt.Sprintf("method %d", k)); err != nil {
				t.Fatal(err)
			}
		}
		p.Legend.Top = true
		c := draw.New(vgimg.New(5*vg.Inch, 3.5*vg.Inch))
		lo := p.Y.Min
		roomForLegend(p, c)
		if p.Y.Min != lo {
			t.Errorf("%d entries: y minimum moved from %v to %v", entries, lo, p.Y.Min)
		}
		da := p.DataCanvas(c)
		_, y := p.Transforms(&da)
		legend := p.Legend.Rectangle(da)
		if top := y(0.97); !(legend.Min.Y > top) {
			t.Errorf("%d entries: the legend's bottom %v is not above the curves' top %v", entries, legend.Min.Y, top)
		}
	}
}

// A band is y ± sd; on a log scale its lower edge stops at a tenth of y
// rather than reach zero or below, where a log scale has no place.
func TestSDBand(t *testing.T) {
	xy := plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 0.5}}
	sd := []float64{2, 0.1}
	for _, c := range []struct {
		log   bool
		lower []float64 // at epochs 2 and 1: the ring runs back along the lower edge
	}{{false, []float64{0.4, -1}}, {true, []float64{0.4, 0.1}}} {
		band, err := sdBand(xy, sd, palette[0], c.log)
		if err != nil {
			t.Fatal(err)
		}
		ring := band.XYs[0]
		want := plotter.XYs{{X: 1, Y: 3}, {X: 2, Y: 0.6}, {X: 2, Y: c.lower[0]}, {X: 1, Y: c.lower[1]}}
		if len(ring) != len(want) {
			t.Fatalf("log %v: ring %v, want %v", c.log, ring, want)
		}
		for i := range want {
			if math.Abs(ring[i].X-want[i].X) > 1e-12 || math.Abs(ring[i].Y-want[i].Y) > 1e-12 {
				t.Errorf("log %v: ring %v, want %v", c.log, ring, want)
				break
			}
		}
	}
}

// A panel of a figure drawn on a log scale has one, unless some mean is
// not positive; the legend then still sits above the curves, the y axis
// raised in proportion on the log scale.
func TestLogPanel(t *testing.T) {
	ece := metric{Name: "ECE (%)", Value: func(s metrics.Score) float64 { return 100 * s.ECE }, Log: true}
	panel := func(accB float64) *plot.Plot {
		p, err := methodPanel("multi-mnist", "top-left", ece, []string{"a", "b"}, map[string][][]experiment.MetricsLine{
			"a": {history(10, 0.9), history(10, 0.85)},
			"b": {history(10, accB)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, ok := panel(0.9).Y.Scale.(plot.LogScale); !ok {
		t.Error("positive ECE: not on a log scale")
	}
	// b's accuracy 1 at the last epoch: its ECE 0 there.
	if _, ok := panel(1).Y.Scale.(plot.LogScale); ok {
		t.Error("an ECE of 0 drawn on a log scale")
	}
	// A single value: its range is widened on the log scale, not through 0.
	one, err := methodPanel("multi-mnist", "top-left", ece, []string{"a"}, map[string][][]experiment.MetricsLine{"a": {history(1, 0.9)}})
	if err != nil {
		t.Fatal(err)
	}
	if !(one.Y.Min > 0 && one.Y.Min < 10 && one.Y.Max > 10) {
		t.Errorf("one ECE of 10 %%: y axis [%v, %v]", one.Y.Min, one.Y.Max)
	}
	if err := Grid(&bytes.Buffer{}, [][]*plot.Plot{{one}}, 5*vg.Inch, 3.5*vg.Inch); err != nil {
		t.Error(err)
	}
	p := panel(0.9)
	c := draw.New(vgimg.New(5*vg.Inch, 3.5*vg.Inch))
	p.Y.Min, p.Y.Max = 1, 100
	roomForLegend(p, c)
	if p.Y.Min != 1 || !(p.Y.Max > 100) {
		t.Fatalf("y axis [%v, %v], want [1, more than 100]", p.Y.Min, p.Y.Max)
	}
	da := p.DataCanvas(c)
	_, y := p.Transforms(&da)
	if legend := p.Legend.Rectangle(da); !(legend.Min.Y > y(100)) {
		t.Errorf("the legend's bottom %v is not above the curves' top %v", legend.Min.Y, y(100))
	}
}

// manyTasks is one epoch on the test split of n classification tasks,
// task i (from 0) at accuracy i/n, ECE 1 − i/n and loss i, its two
// particles 0.1 below and above; with regression, the last task is a
// regression instead.
func manyTasks(n int, regression bool) []experiment.MetricsLine {
	var h []experiment.MetricsLine
	for i := range n {
		a := float64(i) / float64(n)
		score := func(a float64) metrics.Score {
			return metrics.Score{Classification: &metrics.Classification{Accuracy: a, ECE: 1 - a}}
		}
		l := experiment.MetricsLine{Epoch: 1, Split: "test", Task: fmt.Sprintf("t%d", i), Loss: float64(i), Score: score(a),
			Particles: []metrics.Score{score(a - 0.1), score(a + 0.1)}, ParticleLoss: []float64{float64(i), float64(2 * i)}}
		if regression && i == n-1 {
			l.Score = metrics.Score{Regression: &metrics.Regression{MSE: 1}}
			l.Particles = nil
		}
		h = append(h, l)
	}
	return h
}

// Beyond MaxRunRows classification tasks a run's chart is one row, the
// mean over the tasks: for 10 tasks at accuracies 0, 0.1, …, 0.9 the mean
// is 0.45 (by hand: 4.5/10), the particles' 0.35 and 0.55, the loss 4.5
// and the particles' losses 4.5 and 9, within 1e-12; with a regression
// task among them, a row per task.
func TestRunMeanOverManyTasks(t *testing.T) {
	mean, ok := meanOverTasks(manyTasks(10, false), 10)
	if !ok || len(mean) != 1 {
		t.Fatalf("ok %v, %d lines, want one", ok, len(mean))
	}
	m := mean[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"accuracy", m.Accuracy, 0.45}, {"ECE", m.ECE, 0.55}, {"loss", m.Loss, 4.5},
		{"particle 0 accuracy", m.Particles[0].Accuracy, 0.35}, {"particle 1 accuracy", m.Particles[1].Accuracy, 0.55},
		{"particle 0 loss", m.ParticleLoss[0], 4.5}, {"particle 1 loss", m.ParticleLoss[1], 9},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, ok := meanOverTasks(manyTasks(10, true), 10); ok {
		t.Error("a regression task averaged with classification tasks")
	}
	height := func(h []experiment.MetricsLine) int {
		var b bytes.Buffer
		if err := Run(&b, h); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		return img.Bounds().Dy()
	}
	one := height(manyTasks(1, false))
	if got := height(manyTasks(MaxRunRows+1, false)); got != one {
		t.Errorf("%d classification tasks: chart %d px tall, want one row's %d", MaxRunRows+1, got, one)
	}
	if got := height(manyTasks(MaxRunRows, false)); got < MaxRunRows*one*9/10 {
		t.Errorf("%d tasks: chart %d px tall, want a row each (%d px a row)", MaxRunRows, got, one)
	}
	if got := height(manyTasks(MaxRunRows+1, true)); got < MaxRunRows*one {
		t.Errorf("%d tasks, one a regression: chart %d px tall, want a row each", MaxRunRows+1, got)
	}
}
