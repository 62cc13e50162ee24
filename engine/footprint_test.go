package engine

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models/mlp"
	"github.com/mtsgd/mtsgd/particles"
)

// GraphFootprint is a lower bound on what one worker's graphs hold after a
// step, and not a loose one: the heap grown by a one-particle, one-worker
// ensemble after a step and an evaluation lies between 1 and 3 times the
// footprint at its batch size (LeNet and the MLP about 2.1: the ops'
// scratch, which the footprint leaves out).
func TestGraphFootprint(t *testing.T) {
	var regression []data.Task
	for range 7 {
		regression = append(regression, data.Task{Name: "t", Kind: data.Regression})
	}
	for _, tc := range []struct {
		name  string
		cfg   *Config
		input int
	}{
		{"lenet", testConfig(96, tensor.Float32), 36 * 36},
		{"mlp", &Config{Model: mlp.New(21, []int{256, 256, 256}, 1, 1, 1, 1, 1, 1, 1), Tasks: regression, Batch: 512, Dtype: tensor.Float32}, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := GraphFootprint(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			before := liveHeap()
			e, err := New(tc.cfg, 1, 1, sgd(0.01), 1)
			if err != nil {
				t.Fatal(err)
			}
			b := randomBatch(rand.New(rand.NewPCG(1, 0)), tc.cfg.Batch, len(tc.cfg.Tasks))
			b.Inputs = b.Inputs[:tc.cfg.Batch*tc.input]
			if _, err := e.Step(b, Update{Trunk: &particles.Linear{}, Head: &particles.Linear{}}); err != nil {
				t.Fatal(err)
			}
			grown := liveHeap() - before
			runtime.KeepAlive(e)
			want := f.Bytes(tc.cfg.Batch)
			if ratio := grown / want; ratio < 1 || ratio > 3 {
				t.Errorf("footprint %.1f MB (%.0f + %.0f per example), heap grown by %.1f MB: ratio %.2f", want/1e6, f.Fixed, f.PerExample, grown/1e6, ratio)
			}
		})
	}
}

func liveHeap() float64 {
	runtime.GC()
	runtime.GC() // a second cycle frees what finalizers held
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}
