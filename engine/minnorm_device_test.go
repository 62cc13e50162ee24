//go:build cgo

package engine

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/particles"
)

// MGDA, Pareto MTL and MOO-SVGD keep the ensemble on the device: a
// steady-state step reads back, in its one copy, what a step of linear
// scalarisation does (the losses, statistics and row sums) and each
// particle's K×K Gram matrix of its trunk scores (MOO-SVGD also the M×M
// ΘΘᵀ of its kernel), 8·M·K² bytes more; no vector of a trunk's length.
func TestMinNormStepsOnDevice(t *testing.T) {
	const m, k = 3, 2
	prefs, err := particles.Preferences(m, k)
	if err != nil {
		t.Fatal(err)
	}
	devices := testDevices(t)
	for _, c := range []struct {
		name  string
		rule  particles.Rule
		extra int // float64 values read back beyond linear scalarisation's
	}{
		{"linear", &particles.Linear{}, 0},
		{"mgda", &particles.MGDA{}, m * k * k},
		{"pareto-mtl", &particles.ParetoMTL{Prefs: prefs, InitSteps: 1}, m * k * k},
		{"moo-svgd", &particles.MOOSVGD{Repulsion: 0.5}, m*k*k + m*m},
	} {
		for name, device := range devices {
			t.Run(name+"/"+c.name, func(t *testing.T) { minNormStep(t, device, c.rule, c.extra) })
		}
	}
}

// minNormStep is TestMinNormStepsOnDevice's check of rule on device, which
// reads back extra values beyond linear scalarisation's.
func minNormStep(t *testing.T, device gpu.Device, rule particles.Rule, extra int) {
	const m, k = 3, 2
	dev := gpu.NewCounting(device)
	cfg := testConfig(5, tensor.Float32)
	cfg.Device = dev
	tr, err := New(cfg, m, 1, sgd(0.01), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	u := Update{Trunk: rule, Head: &particles.Linear{}}
	rng := rand.New(rand.NewPCG(3, 0))
	var steps []gpu.Counts
	for range 3 {
		before := dev.Counts()
		if _, err := tr.Step(randomBatch(rng, 5, k), u); err != nil {
			t.Fatal(err)
		}
		if tr.res == nil {
			t.Fatal("the ensemble left the device")
		}
		steps = append(steps, dev.Counts().Sub(before))
	}
	back := tr.res.headLen() // linear scalarisation's copy back
	trunk := 8 * len(tr.Particles[0].Trunk)
	for i, got := range steps[1:] {
		t.Logf("step %d: %v; a trunk is %d B", i+1, got, trunk)
		if want := 8 * (back + extra); got.Downloads != 1 || got.DownloadBytes != want {
			t.Errorf("step %d: %d downloads of %d B, want 1 of %d", i+1, got.Downloads, got.DownloadBytes, want)
		}
		if got.Allocs != 0 || got.Frees != 0 {
			t.Errorf("step %d: %d allocations, %d frees on the device", i+1, got.Allocs, got.Frees)
		}
	}
}
