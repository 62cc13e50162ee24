package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
	"github.com/mtsgd/mtsgd/metrics"
)

// With the temperatures removed from a checkpoint whose run has a
// validation split of 120 examples, eval fits them on that split (as
// predict does): the temperatures the run recorded, to 1e-9, said to be
// fitted now; its footnote says so in words.
func TestTemperaturesRemoved(t *testing.T) {
	dir := t.TempDir()
	writeLabelled(t, dir, 1200, false)
	s := experiment.Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Particles, s.Epochs, s.Batch, s.Hidden = 2, 1, 64, "8"
	out, _ := trainSmall(t, s, "")
	evaluate := func(args ...string) Report {
		t.Helper()
		var stdout bytes.Buffer
		o, err := parseFlags(append([]string{"-ckpt", out, "-workers", "1"}, args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := run(context.Background(), o, &stdout); err != nil {
			t.Fatal(err)
		}
		var rep Report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("%v: %s", err, stdout.Bytes())
		}
		return rep
	}
	recorded := evaluate("-json")
	if recorded.TemperatureSource != experiment.TemperatureSourceCheckpoint || len(recorded.Temperatures) != 2 {
		t.Fatalf("temperatures %v from %q; want the checkpoint's", recorded.Temperatures, recorded.TemperatureSource)
	}
	testenv.EditJSON(t, filepath.Join(out, "last", checkpoints.ManifestName), func(m map[string]any) {
		delete(m["metrics"].(map[string]any), "temperatures")
	})
	fitted := evaluate("-json")
	if fitted.TemperatureSource != "fitted on files/valid" {
		t.Errorf("source %q, want fitted on files/valid", fitted.TemperatureSource)
	}
	for j, temp := range recorded.Temperatures {
		if math.Abs(fitted.Temperatures[j]-temp) > 1e-9 {
			t.Errorf("task %d: fitted %v, recorded %v", j, fitted.Temperatures[j], temp)
		}
	}
}

// The footnote under the temperature-scaled rows says where the
// temperatures come from in words.
func TestTemperatureFootnote(t *testing.T) {
	class := metrics.Score{Classification: &metrics.Classification{Accuracy: 0.75, Brier: 0.3, ECE: 0.05, NLL: 0.6, Confidence: 0.7}}
	for source, want := range map[string]string{
		experiment.TemperatureSourceCheckpoint: "(temperatures from the checkpoint)",
		"fitted on files/valid":                "(temperatures fitted on files/valid now: the checkpoint records none)",
	} {
		rep := Report{Checkpoint: "runs/x/best", Dataset: "files", Method: "mtsgd", Epoch: 3, Split: "test", Examples: 10,
			Tasks:        []engine.TaskScores{{Task: "species", Ensemble: class, Particles: []metrics.Score{class, class}}},
			Temperatures: []float64{1.5}, TemperatureSource: source, Calibrated: []metrics.Score{class}}
		var b bytes.Buffer
		if err := writeTable(&b, rep); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "T=: the ensemble after temperature scaling "+want) {
			t.Errorf("source %q: footnote not %q:\n%s", source, want, b.String())
		}
	}
}
