package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
	"github.com/mtsgd/mtsgd/metrics"
)

// predict follows eval's temperature policy (experiment.Run.TemperaturesOrFitOn):
// with the temperatures removed from a checkpoint whose run has a
// validation split of 120 examples, it fits them on that split, loaded
// from the run's files, and applies what the run recorded (the same fit
// of the same outputs, to 1e-9); where the run's data are gone it
// refuses, saying why and what to give, and writes nothing. A regression
// task's temperature other than 1 is refused; one at the search's bound
// is warned about.
func TestTemperaturePolicy(t *testing.T) {
	dir, runDir, r := trainOn(t, 1200, 40, func(s *experiment.Settings) {
		s.Particles, s.Epochs, s.Batch = 2, 1, 64
	})
	recorded := r.Temperatures()
	manifest := filepath.Join(runDir, "last", checkpoints.ManifestName)
	pristine, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	predict := func(t *testing.T, args ...string) (string, string, error) {
		t.Helper()
		var logged bytes.Buffer
		log.SetOutput(&logged)
		defer log.SetOutput(os.Stderr)
		path := filepath.Join(t.TempDir(), "pred.npz")
		o, err := parseFlags(append([]string{"-ckpt", runDir, "-data", filepath.Join(dir, files.TestFile), "-out", path, "-progress=false"}, args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		err = run(context.Background(), o)
		return path, logged.String(), err
	}
	edit := func(t *testing.T, change func(m map[string]any)) {
		t.Helper()
		if err := os.WriteFile(manifest, pristine, 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.EditJSON(t, manifest, change)
	}
	removed := func(m map[string]any) { delete(m["metrics"].(map[string]any), "temperatures") }

	t.Run("removed: fitted on validation", func(t *testing.T) {
		edit(t, removed)
		scaled, logged, err := predict(t)
		if err != nil {
			t.Fatal(err)
		}
		raw, _, err := predict(t, "-temperature=false")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logged, "the checkpoint records no temperatures: fitted on files/valid") {
			t.Errorf("log does not say the temperatures were fitted on the validation split:\n%s", logged)
		}
		for j, task := range tasks[:2] {
			p, _ := readNPZ(t, scaled, task.Name+"/probs")
			q, _ := readNPZ(t, raw, task.Name+"/probs")
			want := make([]float64, len(q))
			metrics.Temper(want, q, task.Classes, recorded[j])
			for i := range p {
				if math.Abs(p[i]-want[i]) > 1e-9 {
					t.Fatalf("%s/probs[%d]: %v, raw %v at the recorded T = %v gives %v", task.Name, i, p[i], q[i], recorded[j], want[i])
				}
			}
		}
	})
	t.Run("removed, data gone: refused", func(t *testing.T) {
		edit(t, removed)
		moved := dir + ".moved"
		if err := os.Rename(dir, moved); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(moved, dir)
		// The inputs to predict on stay where they were asked for.
		os.MkdirAll(dir, 0o755)
		in := filepath.Join(moved, files.TestFile)
		os.Link(in, filepath.Join(dir, files.TestFile))
		defer os.RemoveAll(dir)
		path, _, err := predict(t)
		if cli.Status(err) != cli.ExitError || err == nil ||
			!strings.Contains(err.Error(), "the checkpoint records no temperatures, and fitting them on the run's validation split (120 examples) needs the run's data") ||
			!strings.Contains(err.Error(), "-temperature=false") {
			t.Errorf("status %d, error %v", cli.Status(err), err)
		}
		if _, serr := os.Stat(path); serr == nil {
			t.Errorf("refused, but %s was written", path)
		}
	})
	t.Run("regression task's temperature not 1", func(t *testing.T) {
		edit(t, func(m map[string]any) { testenv.SetJSON(m, 5.0, "metrics", "temperatures", 2) })
		if _, _, err := predict(t); err == nil || !strings.Contains(err.Error(), "temperature 5 of task 2 (norm), a regression task, whose temperature is 1") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("at the search's bound", func(t *testing.T) {
		edit(t, func(m map[string]any) { testenv.SetJSON(m, 19.99999, "metrics", "temperatures", 0) })
		_, logged, err := predict(t)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logged, "temperature 19.99999 is at the bound of the search [0.05, 20]") {
			t.Errorf("no warning of a temperature at the bound:\n%s", logged)
		}
	})
	os.WriteFile(manifest, pristine, 0o644)
}
