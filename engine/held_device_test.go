//go:build cgo

package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
	"github.com/mtsgd/mtsgd/particles"
)

// memorySet is a data set in memory for the tests: inputs of 1×36×36
// pixels in [0, 1), a class of 10 per task, and task 1's target missing
// (NaN) for every fifth example.
type memorySet struct {
	x [][]float32
	y [][]float32
}

func newMemorySet(rng *rand.Rand, n int) *memorySet {
	s := &memorySet{}
	for i := range n {
		x := make([]float32, 36*36)
		for p := range x {
			x[p] = rng.Float32()
		}
		y := []float32{float32(rng.IntN(10)), float32(rng.IntN(10))}
		if i%5 == 3 {
			y[1] = float32(math.NaN())
		}
		s.x, s.y = append(s.x, x), append(s.y, y)
	}
	return s
}

func (s *memorySet) Name() string       { return "memory" }
func (s *memorySet) Tasks() []data.Task { return twoTasks }
func (s *memorySet) InputShape() []int  { return []int{1, 36, 36} }
func (s *memorySet) Len() int           { return len(s.x) }
func (s *memorySet) Example(i int, x, y []float32) error {
	copy(x, s.x[i])
	copy(y, s.y[i])
	return nil
}

// A training set held on the device (Trainer.Hold) trains the ensemble
// bit for bit as batches uploaded from the host do (missing targets and
// a last, padded batch included), and a steady-state step then uploads
// the batch's indices in place of the batch: Config.Batch int32s, the
// other uploads (the rules' small matrices) the same as without it.
func TestHeldStepOnDevice(t *testing.T) {
	for name, dev := range testDevices(t) {
		t.Run(name, func(t *testing.T) { heldStep(t, dev) })
	}
}

func heldStep(t *testing.T, device gpu.Device) {
	const batch, n, m = 5, 13, 3
	set := newMemorySet(rand.New(rand.NewPCG(4, 0)), n)
	type run struct {
		tr     *Trainer
		dev    *gpu.Counting
		live   gpu.Counts   // before the trainer
		counts []gpu.Counts // per step
	}
	runs := map[bool]*run{}
	for _, held := range []bool{false, true} {
		dev := gpu.NewCounting(device)
		cfg := testConfig(batch, tensor.Float32)
		cfg.Device = dev
		live := dev.Counts()
		tr, err := New(cfg, m, 1, sgd(0.01), 2)
		if err != nil {
			t.Fatal(err)
		}
		r := &run{tr: tr, dev: dev, live: live}
		runs[held] = r
		if held {
			if ok, err := tr.Hold(set); err != nil || !ok {
				t.Fatalf("Hold: %v, %v; want true, nil", ok, err)
			}
		}
		u := Update{Trunk: &particles.MTSGD{Repulsion: 0.1}, Head: &particles.SVGD{Repulsion: 0.1}}
		batches := data.Epoch(set, batch, true, 7, 0)
		for batches.Next() {
			before := dev.Counts()
			if _, err := tr.Step(batches.Batch(), u); err != nil {
				t.Fatal(err)
			}
			r.counts = append(r.counts, dev.Counts().Sub(before))
		}
		if err := tr.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	in := runs[false].tr.in
	batchBytes := 4 * in.x.Shape().TotalSize() // float32 values
	batchBytes += 4 * in.weight.Shape().TotalSize()
	for j := range in.targets {
		batchBytes += 4 * (in.targets[j].Shape().TotalSize() + in.taskWeight[j].Shape().TotalSize())
	}
	idxBytes := 4 * batch
	for step := 1; step < len(runs[true].counts); step++ {
		up, held := runs[false].counts[step], runs[true].counts[step]
		t.Logf("step %d uploads: %d (%d B) from the host, %d (%d B) held; %d held launches, %d gather_rows",
			step, up.Uploads, up.UploadBytes, held.Uploads, held.UploadBytes, held.Launches, held.Kernels["gather_rows_f32"])
		if held.UploadBytes != up.UploadBytes-batchBytes+idxBytes || held.Uploads != up.Uploads-len(in.targets)*2-2+1 {
			t.Errorf("step %d: %d uploads of %d bytes with the set held, %d of %d without; want the batch's %d uploads of %d bytes replaced by one of %d (its indices)",
				step, held.Uploads, held.UploadBytes, up.Uploads, up.UploadBytes, 2+2*len(in.targets), batchBytes, idxBytes)
		}
		if g := held.Kernels["gather_rows_f32"]; g != 2+2*len(in.targets) {
			t.Errorf("step %d: %d gather launches, want one per input of the batch, %d", step, g, 2+2*len(in.targets))
		}
	}
	for i := range m {
		a, b := runs[false].tr.Particles[i], runs[true].tr.Particles[i]
		if !slices.Equal(a.Trunk, b.Trunk) {
			t.Errorf("particle %d: trunk differs with the set held", i)
		}
		for j := range a.Heads {
			if !slices.Equal(a.Heads[j], b.Heads[j]) {
				t.Errorf("particle %d: head %d differs with the set held", i, j)
			}
		}
	}
	for held, r := range runs {
		if err := r.tr.Close(); err != nil {
			t.Error(err)
		}
		if c := r.dev.Counts().Sub(r.live); c.Allocs != c.Frees {
			t.Errorf("held %v: %d device allocations and %d frees by the time Close returned", held, c.Allocs, c.Frees)
		}
	}
}

// Hold keeps nothing on the CPU, refuses a set of other tasks, and
// frees a set held before whatever becomes of the next (here an empty
// one, which it does not hold).
func TestHoldRefuses(t *testing.T) {
	tr, err := New(testConfig(5, tensor.Float32), 2, 1, sgd(0.01), 1)
	if err != nil {
		t.Fatal(err)
	}
	set := newMemorySet(rand.New(rand.NewPCG(4, 0)), 4)
	if ok, err := tr.Hold(set); ok || err != nil {
		t.Errorf("Hold on the CPU: %v, %v; want false, nil", ok, err)
	}
	emu := kernels.NewEmulator()
	defer emu.Close()
	cfg := testConfig(5, tensor.Float32)
	cfg.Device = emu
	cfg.Tasks = twoTasks[:1]
	tr, err = New(cfg, 2, 1, sgd(0.01), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if ok, err := tr.Hold(set); ok || err == nil {
		t.Errorf("Hold of a set of 2 tasks for 1: %v, %v; want an error", ok, err)
	}
	cfg = testConfig(5, tensor.Float32)
	cfg.Device = emu
	two, err := New(cfg, 2, 1, sgd(0.01), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	live := emu.Live()
	if ok, err := two.Hold(set); !ok || err != nil {
		t.Fatalf("Hold: %v, %v; want true, nil", ok, err)
	}
	if ok, err := two.Hold(newMemorySet(rand.New(rand.NewPCG(5, 0)), 0)); ok || err != nil || two.held != nil || emu.Live() != live {
		t.Errorf("Hold of an empty set after one: %v, %v, %d allocations for %d before; want false, nil, the first set freed", ok, err, emu.Live(), live)
	}
}
