package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
)

// A regression task's targets are standardised for training (the
// checkpoint records their mean and deviation), and predict's TASK/mean
// and TASK/std are in the data's units: the mean prediction is near
// the targets' mean (about 3.2), not near 0, and its MSE against the
// targets is below their variance.
func TestPredictUnits(t *testing.T) {
	dir, runDir := trained(t)
	c, err := checkpoints.Load(filepath.Join(runDir, "last"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.ReadSettings(c)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := s.Files.Targets["norm"]
	if !ok || !(sc.Std > 0) {
		t.Fatalf("recorded target scales %v", s.Files.Targets)
	}
	out := filepath.Join(t.TempDir(), "p.npz")
	o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, files.TestFile), "-out", out, "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	mean, _ := readNPZ(t, out, "norm/mean")
	var pm, tm, mse, tv float64
	for e, p := range mean {
		_, y := example(max(1000, 2*160) + e)
		pm += p / float64(len(mean))
		tm += y[2] / float64(len(mean))
	}
	for e, p := range mean {
		_, y := example(max(1000, 2*160) + e)
		mse += (p - y[2]) * (p - y[2]) / float64(len(mean))
		tv += (y[2] - tm) * (y[2] - tm) / float64(len(mean))
	}
	if math.Abs(pm-tm) > 0.5*sc.Std || !(mse < tv) {
		t.Errorf("mean prediction %.4g, targets' %.4g (deviation %.4g); MSE %.4g, the targets' variance %.4g", pm, tm, sc.Std, mse, tv)
	}
}
