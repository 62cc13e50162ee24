//go:build cgo

package engine

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
	"github.com/mtsgd/mtsgd/particles"
)

// poisoned is a device rule whose direction of its call number at
// (1-based) holds a NaN at entry index of particle row's vector, on the
// host (Direction) as on the device (DirectionFromGrams): a step that
// diverges where the test says.
type poisoned struct {
	particles.DeviceRule
	at, row, index int
	calls          int
}

func (p *poisoned) Direction(dst [][]float64, e particles.Ensemble) error {
	if err := p.DeviceRule.Direction(dst, e); err != nil {
		return err
	}
	if p.calls++; p.calls == p.at {
		dst[p.row][p.index] = math.NaN()
	}
	return nil
}

func (p *poisoned) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e particles.DeviceEnsemble, grams [][]float64) error {
	if err := p.DeviceRule.DirectionFromGrams(dev, dst, e, grams); err != nil {
		return err
	}
	if p.calls++; p.calls == p.at {
		return dev.Launch("fill_f64", 1, dst+gpu.Ptr(8*(p.row*e.D+p.index)), math.NaN(), 1)
	}
	return nil
}

// A direction made non-finite on the device is reported as on the CPU
// (the same step, particle, task, vector and entry), though after the
// optimisers moved along it: by the next step's copy back, or, when no
// step follows, by whatever reads the parameters next (Sync, which
// checkpoints call, and Evaluate). The failure is sticky: every later
// Step, Sync and Evaluate reports it, and Close too, freeing the device
// memory all the same.
func TestNonFiniteDirectionOnDevice(t *testing.T) {
	svgd := func() particles.DeviceRule { return &particles.SVGD{Repulsion: 0.5} }
	mtsgd := func() particles.DeviceRule { return &particles.MTSGD{Repulsion: 0.5} }
	for _, c := range []struct {
		name        string
		trunk, head particles.DeviceRule
		// then is what follows the poisoned step 2 on the device.
		then string
	}{
		{"trunk/next-step", &poisoned{DeviceRule: mtsgd(), at: 2, row: 1, index: 7}, svgd(), "step"},
		{"head/next-step", mtsgd(), &poisoned{DeviceRule: svgd(), at: 4, row: 2, index: 3}, "step"},
		{"trunk/sync", &poisoned{DeviceRule: mtsgd(), at: 2, row: 0, index: 100}, svgd(), "sync"},
		{"head/evaluate", mtsgd(), &poisoned{DeviceRule: svgd(), at: 3, row: 1, index: 0}, "evaluate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := cpuNotFinite(t, c.trunk, c.head)
			tr, _ := emulatedTrainer(t)
			u := Update{Trunk: c.trunk, Head: c.head}
			rng := rand.New(rand.NewPCG(52, 0))
			for step := 1; step <= 2; step++ {
				if _, err := tr.Step(randomBatch(rng, 5, 2), u); err != nil {
					t.Fatalf("step %d on the device: %v", step, err)
				}
			}
			if tr.res == nil {
				t.Fatal("the ensemble did not stay on the device")
			}
			var got error
			switch c.then {
			case "step":
				_, got = tr.Step(randomBatch(rng, 5, 2), u)
			case "sync":
				got = tr.Sync()
			case "evaluate":
				_, got = tr.Evaluate(context.Background(), memory{randomBatch(rng, 4, 2)})
			}
			sameNotFinite(t, c.then, got, want)
			_, err := tr.Step(randomBatch(rng, 5, 2), u)
			sameNotFinite(t, "a later step", err, want)
			sameNotFinite(t, "a later sync", tr.Sync(), want)
			_, err = tr.Evaluate(context.Background(), memory{randomBatch(rng, 4, 2)})
			sameNotFinite(t, "a later evaluation", err, want)
			sameNotFinite(t, "close", tr.Close(), want)
			if tr.res != nil {
				t.Error("close kept the ensemble on the device")
			}
		})
	}
}

// emulatedTrainer is the trainer of these tests, three LeNet particles
// in float64, on an emulated device closed when the test ends.
func emulatedTrainer(t *testing.T) (*Trainer, *kernels.Emulator) {
	t.Helper()
	emu := kernels.NewEmulator()
	t.Cleanup(func() { emu.Close() })
	cfg := testConfig(5, tensor.Float64)
	cfg.Device = emu
	tr, err := New(cfg, 3, 51, sgd(0.05), 2)
	if err != nil {
		t.Fatal(err)
	}
	return tr, emu
}

// cpuNotFinite is the error of the same two steps on the CPU: the second
// fails there, before the optimisers move. The rules' call counts are
// reset for the device's run.
func cpuNotFinite(t *testing.T, trunk, head particles.DeviceRule) *NotFiniteError {
	t.Helper()
	cpu, err := New(testConfig(5, tensor.Float64), 3, 51, sgd(0.05), 2)
	if err != nil {
		t.Fatal(err)
	}
	u := Update{Trunk: trunk, Head: head}
	rng := rand.New(rand.NewPCG(52, 0))
	if _, err := cpu.Step(randomBatch(rng, 5, 2), u); err != nil {
		t.Fatalf("step 1 on the CPU: %v", err)
	}
	_, err = cpu.Step(randomBatch(rng, 5, 2), u)
	var nf *NotFiniteError
	if !errors.As(err, &nf) || nf.Step != 2 {
		t.Fatalf("step 2 on the CPU: %v, want a non-finite direction", err)
	}
	for _, r := range []particles.DeviceRule{trunk, head} {
		if p, ok := r.(*poisoned); ok {
			p.calls = 0
		}
	}
	return nf
}

// sameNotFinite fails unless err is a *NotFiniteError equal to want.
func sameNotFinite(t *testing.T, what string, err error, want *NotFiniteError) {
	t.Helper()
	var nf *NotFiniteError
	if !errors.As(err, &nf) || *nf != *want {
		t.Errorf("%s: %v; want %v", what, err, want)
	}
}

// The check of a resident step's scores reads only the scores its
// evaluation wrote, and names the vector a NaN is in: the trunks' and
// heads' after a full evaluation, the heads' alone after the first of a
// heads-first step (whose trunk scores are left as they were, before the
// first step the device allocation's contents, which the emulator fills
// with NaN), the trunks' alone after its second.
func TestCheckScoresOnDevice(t *testing.T) {
	tr, emu := emulatedTrainer(t)
	defer tr.Close()
	u := Update{Trunk: &particles.MTSGD{Repulsion: 0.5}, Head: &particles.SVGD{Repulsion: 0.5}, HeadsFirst: true}
	if _, err := tr.Step(randomBatch(rand.New(rand.NewPCG(52, 0)), 5, 2), u); err != nil {
		t.Fatal(err)
	}
	r := tr.res
	if r == nil {
		t.Fatal("the ensemble did not go to the device")
	}
	for _, c := range []struct {
		name          string
		trunks, heads bool
		poison        matrix // the matrix a NaN is put in, at row 2, entry 4
		want          *NotFiniteError
	}{
		{"both/trunk", true, true, r.trunkScore, &NotFiniteError{Step: 9, Particle: 2, Task: "a", What: "trunk gradient", Index: 4}},
		{"both/head", true, true, r.headScore[1], &NotFiniteError{Step: 9, Particle: 2, Task: "b", What: "head gradient", Index: 4}},
		{"heads-pass/head", false, true, r.headScore[1], &NotFiniteError{Step: 9, Particle: 2, Task: "b", What: "head gradient", Index: 4}},
		{"heads-pass/trunk-unread", false, true, r.trunkScore, nil},
		{"trunks-pass/trunk", true, false, r.trunkScore, &NotFiniteError{Step: 9, Particle: 2, Task: "a", What: "trunk gradient", Index: 4}},
		{"trunks-pass/head-unread", true, false, r.headScore[0], nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			saved := make([]float64, c.poison.cols)
			if err := r.download(saved, c.poison, 2); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := r.upload(c.poison, 2, saved); err != nil {
					t.Fatal(err)
				}
			}()
			if err := emu.Launch("fill_f64", 1, c.poison.row(2)+gpu.Ptr(8*4), math.NaN(), 1); err != nil {
				t.Fatal(err)
			}
			tr.next = nextMoves{u: u, trunks: c.trunks, heads: c.heads}
			n, err := r.rowSums(r.sums, r.written(tr.next))
			if err != nil {
				t.Fatal(err)
			}
			sums := make([]float64, n)
			if err := emu.Download(gpu.Bytes(sums), r.sums); err != nil {
				t.Fatal(err)
			}
			err = tr.checkScores(9, sums)
			if c.want == nil {
				if err != nil {
					t.Errorf("%v; want no error (the poisoned scores are not this evaluation's)", err)
				}
				return
			}
			sameNotFinite(t, c.name, err, c.want)
		})
	}
}
