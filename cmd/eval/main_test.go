package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
	"github.com/mtsgd/mtsgd/metrics"
)

// trainSmall trains a tiny run of s with data from dataDir and returns its
// directory and its evaluation history.
func trainSmall(t *testing.T, s experiment.Settings, dataDir string) (string, []experiment.MetricsLine) {
	t.Helper()
	d, _, err := experiment.LoadData(s, dataDir)
	testenv.CheckData(t, err)
	r, err := experiment.New(s, d, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = t.TempDir()
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r.Out, r.History()
}

// eval -json on a run's checkpoint prints exactly the figures its training
// printed for the checkpoint's epoch, for the ensemble and every particle.
func TestJSONReproducesTraining(t *testing.T) {
	s := experiment.Defaults("multi-mnist")
	s.Particles, s.Epochs, s.Batch, s.LR, s.Seed, s.TrainLimit, s.TestLimit = 2, 2, 32, 0.01, 4, 96, 70
	out, history := trainSmall(t, s, "")
	var stdout bytes.Buffer
	o, err := parseFlags([]string{"-ckpt", out, "-json", "-reliability", filepath.Join(out, "rel")}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Epoch, Examples int
		Tasks           []struct {
			Task      string
			Ensemble  map[string]float64
			Particles []map[string]float64
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.Bytes())
	}
	if rep.Epoch != 2 || rep.Examples != 70 || len(rep.Tasks) != 2 {
		t.Fatalf("report for epoch %d, %d examples, %d tasks", rep.Epoch, rep.Examples, len(rep.Tasks))
	}
	for _, task := range rep.Tasks {
		var line experiment.MetricsLine
		for _, l := range history {
			if l.Epoch == 2 && l.Split == "test" && l.Task == task.Task {
				line = l
			}
		}
		var want struct {
			Ensemble  map[string]float64
			Particles []map[string]float64
		}
		b, _ := json.Marshal(line.Score)
		json.Unmarshal(b, &want.Ensemble)
		b, _ = json.Marshal(line.Particles)
		json.Unmarshal(b, &want.Particles)
		if task.Task != line.Task || !reflect.DeepEqual(task.Ensemble, want.Ensemble) || !reflect.DeepEqual(task.Particles, want.Particles) {
			t.Errorf("task %s: eval %v %v\ntraining %v %v", task.Task, task.Ensemble, task.Particles, want.Ensemble, want.Particles)
		}
		testenv.CheckPNG(t, filepath.Join(out, "rel", "reliability-"+task.Task+".png"))
	}

	// The table shows the same figures, rounded.
	stdout.Reset()
	o.JSON, o.Reliability = false, ""
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p0 acc", "ensemble acc", "top-left", "bottom-right", "epoch 2 (step 6); test split, 70 examples"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "-ckpt is required"},
		{[]string{"-ckpt", "x", "-split", "val"}, "-split must be test, valid or train"},
		{[]string{"-ckpt", "x", "-workers", "0"}, "-workers must be at least 1"},
		{[]string{"-ckpt", "x", "-limit", "-5"}, "-limit must be 0 (all) or positive, got -5"},
	} {
		if _, err := parseFlags(tc.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	t.Run("MTSGD_MEMORY", func(t *testing.T) {
		t.Setenv("MTSGD_MEMORY", "garbage")
		if _, err := parseFlags([]string{"-ckpt", "x"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `$MTSGD_MEMORY "garbage": not a size`) {
			t.Errorf("error %v", err)
		}
	})
	dir := t.TempDir()
	o, _ := parseFlags([]string{"-ckpt", dir}, &bytes.Buffer{})
	if err := run(context.Background(), o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no checkpoint here") {
		t.Errorf("empty directory: error %v", err)
	}
}

// Regression: eval prints each task's MSE, and on the validation split the
// figures of the training run's validation lines.
func TestSarcosValidation(t *testing.T) {
	dir := testenv.SarcosFixture(t)
	s := experiment.Defaults("sarcos")
	s.Particles, s.Epochs, s.Batch, s.LR, s.Seed, s.TrainLimit, s.TestLimit = 2, 1, 256, 1e-3, 2, 512, 100
	out, history := trainSmall(t, s, dir)
	var stdout bytes.Buffer
	o, _ := parseFlags([]string{"-ckpt", out, "-split", "valid", "-json", "-data-dir", dir}, &bytes.Buffer{})
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Examples != 100 || len(rep.Tasks) != 7 {
		t.Fatalf("%d examples, %d tasks", rep.Examples, len(rep.Tasks))
	}
	for j, task := range rep.Tasks {
		line := history[j] // epoch 1, split valid, task j
		if line.Split != "valid" || task.Ensemble.Regression == nil || task.Ensemble.MSE != line.MSE {
			t.Errorf("task %s: eval MSE %v, training's %s line %v", task.Task, task.Ensemble.Regression, line.Split, line.MSE)
		}
	}
	stdout.Reset()
	o.JSON = false
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "torque7") || !strings.Contains(stdout.String(), "ensemble MSE") {
		t.Errorf("table:\n%s", stdout.String())
	}
}

// CelebA: eval on a ResNet-18 run's checkpoint prints the figures its
// training printed for the test split. Evaluation normalises with the
// running statistics, so this holds only if the checkpoint carries them.
// The run trains torchvision's layout (resnet18: the same batch norms as
// the default resnet18-cifar, a 15th of its work).
func TestCelebAFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("trains ResNet-18")
	}
	dir := testenv.CelebAFixture(t, 40, nil)
	s := experiment.Defaults("celeba")
	s.Model, s.Particles, s.Epochs, s.Batch, s.Tasks = "resnet18", 2, 1, 16, "Male,Smiling"
	out, history := trainSmall(t, s, dir)
	var stdout bytes.Buffer
	o, _ := parseFlags([]string{"-ckpt", out, "-json", "-data-dir", dir}, &bytes.Buffer{})
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Examples != 8 || len(rep.Tasks) != 2 {
		t.Fatalf("%d examples, %d tasks; want the fixture's 8 test images, 2 tasks", rep.Examples, len(rep.Tasks))
	}
	for j, task := range rep.Tasks {
		line := history[2+j] // epoch 1: valid lines, then test lines
		got, _ := json.Marshal(task)
		want, _ := json.Marshal(engine.TaskScores{Task: line.Task, Ensemble: line.Score, Particles: line.Particles})
		if line.Split != "test" || string(got) != string(want) {
			t.Errorf("eval %s\ntraining's %s line %s", got, line.Split, want)
		}
	}
}

// A checkpoint whose parameters are NaN is reported as diverged
// (experiment.ErrDiverged, status 6), after -json and -reliability have written what
// they can: JSON with null for the non-finite scores, and the diagrams.
func TestDivergedCheckpoint(t *testing.T) {
	s := experiment.Defaults("multi-mnist")
	s.Particles, s.Epochs, s.Batch, s.LR, s.Seed, s.TrainLimit, s.TestLimit = 2, 1, 32, 0.01, 4, 64, 40
	out, _ := trainSmall(t, s, "")
	last := filepath.Join(out, "last")
	c, err := checkpoints.Load(last)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Particles[1].Trunk {
		c.Particles[1].Trunk[i] = math.NaN()
	}
	if err := checkpoints.Save(last, c); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	rel := filepath.Join(out, "rel")
	o, err := parseFlags([]string{"-ckpt", out, "-json", "-reliability", rel}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), o, &stdout)
	if !errors.Is(err, experiment.ErrDiverged) || !strings.Contains(err.Error(), "particle 1's parameters") {
		t.Fatalf("error %v, want experiment.ErrDiverged naming particle 1's parameters", err)
	}
	var rep struct {
		Tasks []struct {
			Task      string
			Ensemble  map[string]*float64
			Particles []map[string]*float64
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.Bytes())
	}
	if len(rep.Tasks) != 2 {
		t.Fatalf("%d tasks in %s", len(rep.Tasks), stdout.Bytes())
	}
	for _, task := range rep.Tasks {
		if v, ok := task.Ensemble["nll"]; !ok || v != nil {
			t.Errorf("task %s: ensemble NLL %v, want null", task.Task, v)
		}
		if v := task.Particles[0]["accuracy"]; v == nil {
			t.Errorf("task %s: particle 0's accuracy is null, want its finite value", task.Task)
		}
		testenv.CheckPNG(t, filepath.Join(rel, "reliability-"+task.Task+".png"))
	}
	// The table says NaN, and eval still reports the divergence.
	stdout.Reset()
	o.JSON, o.Reliability = false, ""
	if err := run(context.Background(), o, &stdout); !errors.Is(err, experiment.ErrDiverged) || !strings.Contains(stdout.String(), "NaN") {
		t.Errorf("table: error %v, output %s", err, stdout.String())
	}
}

// eval reports the checkpoint's temperatures and the scores after them
// (on the validation split the fitted NLL is not above the raw one), and
// -ood scores Multi-Fashion's test inputs against a Multi-MNIST run's by
// AUROC; -temperature=false leaves the temperatures out, and -ood of the
// run's own data set is refused.
func TestTemperatureAndOOD(t *testing.T) {
	s := experiment.Defaults("multi-mnist")
	// 100 validation examples, the least a temperature is fitted on.
	s.Particles, s.Epochs, s.Batch, s.LR, s.Seed, s.TrainLimit, s.TestLimit = 2, 1, 32, 0.01, 4, 96, 100
	out, _ := trainSmall(t, s, "")
	type report struct {
		Examples          int
		Tasks             []struct{ Ensemble map[string]float64 }
		Temperatures      []float64
		TemperatureSource string `json:"temperature_source"`
		Calibrated        []map[string]float64
		OOD               *experiment.OOD
	}
	evalJSON := func(args ...string) report {
		t.Helper()
		o, err := parseFlags(append([]string{"-ckpt", out, "-json"}, args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		var stdout bytes.Buffer
		if err := run(context.Background(), o, &stdout); err != nil {
			t.Fatal(err)
		}
		var rep report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("%v: %s", err, stdout.Bytes())
		}
		return rep
	}
	v := evalJSON("-split", "valid")
	if len(v.Temperatures) != 2 || v.TemperatureSource != "checkpoint" || len(v.Calibrated) != 2 {
		t.Fatalf("valid split: temperatures %v from %q, %d calibrated scores", v.Temperatures, v.TemperatureSource, len(v.Calibrated))
	}
	for j := range v.Tasks {
		if raw, cal := v.Tasks[j].Ensemble["nll"], v.Calibrated[j]["nll"]; cal > raw+1e-12 {
			t.Errorf("task %d: calibrated validation NLL %v above the raw %v", j, cal, raw)
		}
	}
	r := evalJSON("-ood", "multi-fashion")
	if r.OOD == nil || r.OOD.Dataset != "multi-fashion" || r.OOD.InExamples != 100 || r.OOD.OutExamples != 100 || len(r.OOD.Tasks) != 2 {
		t.Fatalf("-ood: %+v", r.OOD)
	}
	for _, a := range []float64{r.OOD.Entropy, r.OOD.MutualInformation, r.OOD.Tasks[0].Entropy, r.OOD.Tasks[1].MutualInformation} {
		if !(a >= 0 && a <= 1) {
			t.Errorf("AUROC %v outside [0, 1]: %+v", a, r.OOD)
		}
	}
	if off := evalJSON("-temperature=false"); off.Temperatures != nil || off.Calibrated != nil {
		t.Errorf("-temperature=false: %v, %v", off.Temperatures, off.Calibrated)
	}
	o, err := parseFlags([]string{"-ckpt", out, "-ood", "multi-mnist"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-ood multi-mnist") {
		t.Errorf("-ood of the run's own data set: %v", err)
	}
}

// A run with classification and regression tasks prints one table per
// kind, each under its own headers: the regression task's MSE is never
// under an accuracy column.
func TestTableMixedTasks(t *testing.T) {
	class := metrics.Score{Classification: &metrics.Classification{Accuracy: 0.75, Brier: 0.3, ECE: 0.05, NLL: 0.6, Confidence: 0.7}}
	reg := metrics.Score{Regression: &metrics.Regression{MSE: 112225.5}}
	rep := Report{Checkpoint: "runs/x/best", Dataset: "files", Method: "mtsgd", Epoch: 3, Split: "test", Examples: 10,
		Tasks: []engine.TaskScores{
			{Task: "mass", Ensemble: reg, Particles: []metrics.Score{reg, reg}},
			{Task: "species", Ensemble: class, Particles: []metrics.Score{class, class}},
		}}
	var b bytes.Buffer
	if err := writeTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	header := ""
	for _, l := range lines {
		switch f := strings.Fields(l); {
		case len(f) > 0 && f[0] == "task":
			header = l
		case len(f) > 0 && f[0] == "mass":
			if !strings.Contains(header, "ensemble MSE") || strings.Contains(header, "acc") || !strings.Contains(l, "112225.5000") {
				t.Errorf("regression row %q under header %q", l, header)
			}
		case len(f) > 0 && f[0] == "species":
			if !strings.Contains(header, "ensemble acc") || strings.Contains(header, "MSE") {
				t.Errorf("classification row %q under header %q", l, header)
			}
		}
	}
	if strings.Count(b.String(), "\ntask") != 2 {
		t.Errorf("want two tables:\n%s", b.String())
	}
}
