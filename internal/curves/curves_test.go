package curves

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
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
