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
