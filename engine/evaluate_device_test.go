//go:build cgo

package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/particles"
)

// On a device, Outputs keeps every batch's outputs there and reads them
// back in one copy at the end, giving bit for bit what Predict, which
// reads each batch's back, gives; in float32 and float64, the last batch
// padded, a target missing.
func TestOutputsOnDeviceOneCopy(t *testing.T) {
	for name, device := range testDevices(t) {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			t.Run(name+"/"+dt.String(), func(t *testing.T) { outputsOneCopy(t, device, dt) })
		}
	}
}

func outputsOneCopy(t *testing.T, device gpu.Device, dt tensor.Dtype) {
	const m = 3
	dev := gpu.NewCounting(device)
	cfg := testConfig(5, dt)
	cfg.Device = dev
	tr, err := New(cfg, m, 1, sgd(0.05), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	u := Update{Trunk: &particles.MTSGD{Repulsion: 0.5}, Head: &particles.SVGD{Repulsion: 0.5}}
	rng := rand.New(rand.NewPCG(8, 0))
	for range 2 {
		if _, err := tr.Step(randomBatch(rng, 5, 2), u); err != nil {
			t.Fatal(err)
		}
	}
	set := newMemorySet(rng, 13)
	if err := tr.Sync(); err != nil {
		t.Fatal(err)
	}
	before := dev.Counts()
	out, labels, err := tr.Outputs(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	c := dev.Counts().Sub(before)
	t.Logf("Outputs of 13 examples in batches of 5: %v", c)
	if c.Downloads != 1 {
		t.Errorf("Outputs made %d downloads, want 1", c.Downloads)
	}
	// Predict, a batch at a time, brings each batch's back.
	var want [][][]float64
	var wantLabels [][]float64
	before = dev.Counts()
	err = tr.Predict(context.Background(), set, func(b *data.Batch, pred [][][]float64) error {
		if want == nil {
			want, wantLabels = make([][][]float64, len(pred)), make([][]float64, len(pred))
			for j := range pred {
				want[j] = make([][]float64, len(pred[j]))
			}
		}
		for j := range pred {
			for i := range pred[j] {
				want[j][i] = append(want[j][i], pred[j][i]...)
			}
			for _, y := range b.Targets[j] {
				wantLabels[j] = append(wantLabels[j], float64(y))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := dev.Counts().Sub(before).Downloads; n <= c.Downloads {
		t.Errorf("Predict made %d downloads, Outputs %d", n, c.Downloads)
	}
	for j := range want {
		for i := range want[j] {
			if !slices.Equal(out[j][i], want[j][i]) {
				t.Errorf("task %d, particle %d: outputs differ from Predict's", j, i)
			}
		}
		if !slices.EqualFunc(labels[j], wantLabels[j], func(a, b float64) bool { return a == b || a != a && b != b }) {
			t.Errorf("task %d: labels %v, Predict's %v", j, labels[j], wantLabels[j])
		}
	}
}
