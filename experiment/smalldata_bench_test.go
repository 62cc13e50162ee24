package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mtsgd/mtsgd/data/files"
)

// BenchmarkSmallData trains 100 epochs on a 15-row table (a
// classification and a regression task, the defaults of train -data, as
// train runs it: checkpoints at most every 10 s) and reports what an
// epoch costs beyond its training step: the evaluation, the checkpoints
// and metrics.jsonl. On such data the step is short, and anything done
// per epoch shows.
func BenchmarkSmallData(b *testing.B) {
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var csv strings.Builder
	csv.WriteString("a,b,c,d,species,mass\n")
	for range 15 {
		a, x, c, d := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		species := 0
		if a+x > 0 {
			species = 1
		}
		fmt.Fprintf(&csv, "%.3f,%.3f,%.3f,%.3f,%d,%.1f\n", a, x, c, d, species, 4200+800*c+50*rng.NormFloat64())
	}
	if err := os.WriteFile(filepath.Join(dir, "train.csv"), []byte(csv.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	desc := files.Description{Tasks: []files.TaskSpec{{Name: "species", Kind: "classification", Classes: 2}, {Name: "mass", Kind: "regression"}}}
	if err := files.WriteDescription(dir, desc); err != nil {
		b.Fatal(err)
	}
	s := Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Epochs = 100
	d, _, err := LoadData(s, "")
	if err != nil {
		b.Fatal(err)
	}
	var steps, total time.Duration
	for range b.N {
		r, err := New(s, d, 2)
		if err != nil {
			b.Fatal(err)
		}
		r.Out, r.SaveEvery = b.TempDir(), 10*time.Second
		var began time.Time
		r.Hooks.EpochStart = func(int, int, int) { began = time.Now() }
		r.Hooks.Step = func(int, int, []float64) { steps += time.Since(began) }
		start := time.Now()
		if err := r.Train(context.Background()); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	epochs := float64(b.N * s.Epochs)
	b.ReportMetric(steps.Seconds()*1e3/epochs, "step-ms/epoch")
	b.ReportMetric((total-steps).Seconds()*1e3/epochs, "beyond-step-ms/epoch")
}
