//go:build cgo

package experiment

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
	"github.com/mtsgd/mtsgd/models/lenet"
	"github.com/mtsgd/mtsgd/particles"
)

// nanAt is a device rule whose direction of its call number at (1-based)
// holds a NaN, on the device: a step that diverges there.
type nanAt struct {
	particles.DeviceRule
	at, calls int
}

func (r *nanAt) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e particles.DeviceEnsemble, grams [][]float64) error {
	if err := r.DeviceRule.DirectionFromGrams(dev, dst, e, grams); err != nil {
		return err
	}
	if r.calls++; r.calls == r.at {
		return dev.Launch("fill_f64", 1, dst+gpu.Ptr(8*(e.D+5)), math.NaN(), 1)
	}
	return nil
}

// A run on a device whose step moves a particle along a non-finite
// direction, checked only after the optimisers moved (engine: the
// check rides on the next copy back), is marked diverged and saves
// nothing of that step: not when the step is the epoch's last, the
// evaluation reading the parameters first, nor when last/ is due right
// after it (CheckpointEvery), where last/ keeps the step before.
func TestDivergedOnDeviceNotSaved(t *testing.T) {
	for _, c := range []struct {
		name      string
		at, every int
		lastStep  int // last/'s step after the run, 0 for none
	}{
		{"epoch-end", 3, 0, 0}, // the epoch's 3 steps, then its evaluation
		{"checkpoint", 2, 1, 1},
		{"next-step", 2, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			emu := kernels.NewEmulator()
			defer emu.Close()
			parts := Components{Model: lenet.New(10, 10), Trunk: &nanAt{DeviceRule: &particles.MTSGD{Repulsion: 1}, at: c.at},
				Head: &particles.SVGD{Repulsion: 1}, Device: emu}
			s := testSettings(1)
			s.Model, s.Method = "my-lenet", "my-mtsgd"
			r, err := NewWith(s, Data{Train: train, Test: test}, parts, 1)
			if err != nil {
				t.Fatal(err)
			}
			r.Out, r.CheckpointEvery = t.TempDir(), c.every
			err = r.Train(context.Background())
			var nf *engine.NotFiniteError
			if !errors.Is(err, ErrDiverged) || !errors.As(err, &nf) || nf.Step != c.at || nf.Particle != 1 || nf.Index != 5 {
				t.Fatalf("Train: %v; want a divergence at step %d, particle 1, entry 5", err, c.at)
			}
			last, err := checkpoints.Load(filepath.Join(r.Out, "last"))
			switch {
			case c.lastStep == 0 && !errors.Is(err, os.ErrNotExist):
				t.Errorf("last/: %v; want none", err)
			case c.lastStep > 0 && err != nil:
				t.Fatal(err)
			case c.lastStep > 0 && last.Step != c.lastStep:
				t.Errorf("last/ at step %d, want %d", last.Step, c.lastStep)
			}
			if _, err := os.Stat(filepath.Join(r.Out, "best")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("best/: %v; want none", err)
			}
		})
	}
}

// A run trained on a device and closed holds no device memory: compare
// trains its runs one after another in one process, each closed when done
// (Run.Close).
func TestCloseFreesDevice(t *testing.T) {
	emu := kernels.NewEmulator()
	defer emu.Close()
	parts := Components{Model: lenet.New(10, 10), Trunk: &particles.MTSGD{Repulsion: 1}, Head: &particles.SVGD{Repulsion: 1}, Device: emu}
	s := testSettings(1)
	s.Model, s.Method = "my-lenet", "my-mtsgd"
	before := emu.Live()
	r, err := NewWith(s, Data{Train: train, Test: test}, parts, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = t.TempDir()
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if emu.Live() <= before {
		t.Fatalf("%d device allocations after training, %d before: the run never held the ensemble there", emu.Live(), before)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := emu.Live(); n != before {
		t.Errorf("%d device allocations after Close, %d before the run", n, before)
	}
}
