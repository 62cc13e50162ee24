package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
	"github.com/mtsgd/mtsgd/particles"
)

// A method and a data set of this test file's own, registered as any new
// one is: train, its help and -resume find them with no other change.
const (
	testMethod  = "test-first-task"
	testDataset = "test-images"
)

func init() {
	experiment.RegisterMethod(experiment.Method{
		Name:  testMethod,
		Help:  "(tests) each trunk follows its first task's score alone, each head its own task's",
		Trunk: func(experiment.RuleParams) (particles.Rule, error) { return firstTask{}, nil },
		Heads: func(experiment.RuleParams) (particles.Rule, error) { return firstTask{}, nil },
	})
	experiment.RegisterDataset(experiment.Dataset{
		Name: testDataset,
		// Synthetic Multi-MNIST-shaped images: no files to read.
		Load: func(_ string, s experiment.Settings) (experiment.Data, error) {
			return experiment.Data{
				Train: testenv.Images(testDataset+"/train", 64, s.Seed),
				Test:  testenv.Images(testDataset+"/test", 24, s.Seed+1),
			}, nil
		},
		Model:    "lenet",
		Defaults: func(s *experiment.Settings) { s.Epochs, s.Batch, s.LR = 2, 16, 0.01 },
		Best:     "nll",
	})
}

// firstTaskSteps counts firstTask's directions, to see that a run used it.
var firstTaskSteps atomic.Int64

// firstTask moves every particle along its first target's score.
type firstTask struct{}

func (firstTask) Direction(dst [][]float64, e particles.Ensemble) error {
	if e.Targets() == 0 || len(e.Theta) != len(dst) {
		return errors.New("first-task: no scores for these particles")
	}
	for m := range dst {
		e.CopyScore(dst[m], 0, m)
	}
	firstTaskSteps.Add(1)
	return nil
}

// trainArgs trains the test method on the test data set into out.
func trainArgs(out string, extra ...string) []string {
	return append([]string{"-dataset", testDataset, "-method", testMethod, "-particles", "2", "-train-limit", "40",
		"-workers", "1", "-seed", "7", "-out", out, "-progress=false"}, extra...)
}

// The test method and data set are in train's help and checks, take the
// data set's defaults, and train; -resume continues the run with the
// rules the checkpoint's method names, to the parameters of a run never
// stopped.
func TestRegisteredMethodTrainsAndResumes(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{testMethod + "  (tests) each trunk follows", testDataset + "; required", "nll " + testDataset} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
	if _, err := parseFlags([]string{"-dataset", "mog3", "-method", testMethod}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "not one for toy problems") {
		t.Errorf("%s on a toy problem: %v", testMethod, err)
	}

	straight := t.TempDir()
	o, err := parseFlags(trainArgs(straight), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Model != "lenet" || o.Epochs != 2 || o.Batch != 16 || o.LR != 0.01 || o.BestMetric != "nll" || o.Preset != "" || o.Warmup != 0 {
		t.Errorf("the data set's defaults, without presets: %+v, best %s", o.Settings, o.BestMetric)
	}
	before := firstTaskSteps.Load()
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	// 40 examples, batch 16: 3 steps an epoch, trunk and two heads each.
	if n := firstTaskSteps.Load() - before; n != 2*3*3 {
		t.Errorf("the method's rules ran %d times, want 18", n)
	}
	want := lastCheckpoint(t, straight)
	if s, err := experiment.ReadSettings(want); err != nil || s.Method != testMethod || s.Dataset != testDataset {
		t.Fatalf("checkpoint settings %+v, %v", s, err)
	}

	stopped := t.TempDir()
	if o, err = parseFlags(trainArgs(stopped, "-epochs", "1"), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if o, err = parseFlags([]string{"-resume", stopped, "-epochs", "2", "-workers", "1", "-progress=false"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	before = firstTaskSteps.Load()
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if n := firstTaskSteps.Load() - before; n != 3*3 {
		t.Errorf("the resumed run's rules ran %d times, want 9", n)
	}
	got := lastCheckpoint(t, stopped)
	if got.Epoch != 2 || got.Step != want.Step || !reflect.DeepEqual(got.Particles, want.Particles) {
		t.Errorf("resumed to epoch %d step %d, parameters equal %v; want epoch 2, step %d, the straight run's",
			got.Epoch, got.Step, reflect.DeepEqual(got.Particles, want.Particles), want.Step)
	}
}

func lastCheckpoint(t *testing.T, out string) *checkpoints.Checkpoint {
	t.Helper()
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
