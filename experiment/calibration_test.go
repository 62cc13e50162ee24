package experiment

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/metrics"
)

// valid is large enough to fit temperatures on (MinCalibrationExamples);
// calibrated runs lift testSettings' TestLimit, which limits it too.
var valid = newImages("valid", MinCalibrationExamples, 5)

func calibratedSettings() Settings {
	s := testSettings(1)
	s.TestLimit = 0
	return s
}

// A run with a validation split records, in its checkpoint, one
// temperature per task fitted on that split: the same as FitTemperatures
// on the restored ensemble's validation outputs, and bit for bit the same
// when the test split is another one, which shows the test split plays no
// part. Without a validation split there is none.
func TestTemperaturesFromValidation(t *testing.T) {
	s := calibratedSettings()
	temps := func(test *images) []float64 {
		r, err := New(s, Data{Train: train, Valid: valid, Test: test}, 2)
		if err != nil {
			t.Fatal(err)
		}
		r.Out = t.TempDir()
		if err := r.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		c, err := checkpoints.Load(filepath.Join(r.Out, "last"))
		if err != nil {
			t.Fatal(err)
		}
		back, err := Restore(c, Data{Train: train, Valid: valid, Test: test}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Temperatures(), r.Temperatures()) {
			t.Fatalf("restored temperatures %v, the run's %v", back.Temperatures(), r.Temperatures())
		}
		out, labels, err := back.Trainer.Outputs(context.Background(), back.ValidSet)
		if err != nil {
			t.Fatal(err)
		}
		want, err := FitTemperatures(valid.Tasks(), out, labels)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(want, r.Temperatures()) {
			t.Fatalf("recorded temperatures %v, fitted on the restored run's validation outputs %v", r.Temperatures(), want)
		}
		return r.Temperatures()
	}
	a, b := temps(test), temps(newImages("other test", 24, 9))
	if len(a) != 2 || !slices.Equal(a, b) {
		t.Fatalf("temperatures %v with one test split, %v with another", a, b)
	}
	for _, v := range a {
		if !(v >= metrics.MinTemperature && v <= metrics.MaxTemperature) || math.IsNaN(v) {
			t.Fatalf("temperature %v", v)
		}
	}
	r := newRun(t, calibratedSettings(), t.TempDir())
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.Temperatures() != nil {
		t.Fatalf("no validation split, temperatures %v", r.Temperatures())
	}
}

// Calibrated at temperature 1 is the ensemble's own score; at the fitted
// temperatures the validation NLL is not above it.
func TestCalibrated(t *testing.T) {
	r, err := New(calibratedSettings(), Data{Train: train, Valid: valid, Test: test}, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = t.TempDir()
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, labels, err := r.Trainer.Outputs(context.Background(), r.ValidSet)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.Trainer.Score(out, labels)
	if err != nil {
		t.Fatal(err)
	}
	one, err := Calibrated(valid.Tasks(), out, labels, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	fitted, err := Calibrated(valid.Tasks(), out, labels, r.Temperatures())
	if err != nil {
		t.Fatal(err)
	}
	for j := range raw {
		if math.Abs(one[j].NLL-raw[j].Ensemble.NLL) > 1e-12 || one[j].Accuracy != raw[j].Ensemble.Accuracy {
			t.Errorf("task %d at T = 1: %+v, the ensemble's %+v", j, *one[j].Classification, *raw[j].Ensemble.Classification)
		}
		if fitted[j].NLL > raw[j].Ensemble.NLL+1e-12 || fitted[j].Accuracy != raw[j].Ensemble.Accuracy {
			t.Errorf("task %d at T = %v: NLL %v accuracy %v, raw %v %v", j, r.Temperatures()[j], fitted[j].NLL, fitted[j].Accuracy,
				raw[j].Ensemble.NLL, raw[j].Ensemble.Accuracy)
		}
	}
}

// DetectOOD of a set against itself is chance; against outputs made
// uniform (the most uncertain an ensemble can be) its entropy AUROC is 1.
func TestDetectOOD(t *testing.T) {
	r := newRun(t, testSettings(1), t.TempDir())
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	in, _, err := r.Trainer.Outputs(context.Background(), r.TestSet)
	if err != nil {
		t.Fatal(err)
	}
	same, err := DetectOOD("same", test.Tasks(), in, in)
	if err != nil {
		t.Fatal(err)
	}
	if same.Entropy != 0.5 || same.MutualInformation != 0.5 || len(same.Tasks) != 2 {
		t.Errorf("against itself: %+v", same)
	}
	uniform := make([][][]float64, len(in))
	for j := range in {
		for i := range in[j] {
			u := make([]float64, len(in[j][i]))
			for e := range u {
				u[e] = 0.1
			}
			uniform[j] = append(uniform[j], u)
		}
	}
	far, err := DetectOOD("uniform", test.Tasks(), in, uniform)
	if err != nil {
		t.Fatal(err)
	}
	if far.Entropy != 1 || far.Tasks[0].Entropy != 1 {
		t.Errorf("against uniform predictions: %+v", far)
	}
	// Agreeing uniform members disagree by nothing: their mutual
	// information is 0, below every in-distribution example's but ties.
	if far.MutualInformation > 0.5 {
		t.Errorf("agreeing uniform members: mutual-information AUROC %v", far.MutualInformation)
	}
}
