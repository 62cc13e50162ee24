package experiment

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// A run too big for the machine is refused by New before it allocates:
// the error names the flag behind the largest part and the estimate, and
// New allocates little on the way (a few MB: the graphs measured at
// batches of 1 and 2). The machine is taken to have 24 GB, as this one.
func TestNewRefusesRunsTooBig(t *testing.T) {
	t.Setenv(sysmem.Env, "24G")
	for _, tc := range []struct {
		name string
		edit func(*Settings)
		want []string // in the error; none: the run fits
	}{
		{"fits", func(*Settings) {}, nil},
		{"batch", func(s *Settings) { s.Batch = 100_000 }, []string{"-batch 100000: the run needs at least ", "graphs of 2 workers", "lower -batch"}},
		{"particles", func(s *Settings) { s.Particles = 100_000 }, []string{"-particles 100000: the run needs at least ", "kernel matrices", "lower -particles"}},
		{"particles without kernel", func(s *Settings) { s.Particles, s.Method = 100_000, "linear" }, []string{"-particles 100000: ", "particle vectors", "lower -particles"}},
		{"checkpoint's batch", func(s *Settings) { s.Batch = 100_000_000 }, []string{"-batch 100000000: the run needs at least ", "TiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings(1)
			tc.edit(&s)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := New(s, Data{Train: manyRows{train}, Test: test}, 2)
			runtime.ReadMemStats(&after)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, sysmem.ErrTooBig) {
				t.Fatalf("error %v, want ErrTooBig", err)
			}
			for _, want := range append(tc.want, "more than the 24.0 GiB this machine has ($MTSGD_MEMORY)") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
				t.Errorf("New allocated %d MB before refusing", grown>>20)
			}
		})
	}
}

// The estimate is a lower bound: the paper's CelebA run with
// torchvision's ResNet-18 (-model resnet18; 5 particles, 10 tasks, batch
// 64, Adam, 2 workers) holds at least what BenchmarkResNetStep holds, the
// same steps without the data or an evaluation, whose peak RSS was 6.2 GB
// (docs/performance.md, 2026-11-24). Its estimate, 6.2 GB with the
// evaluation's 0.02 GB, must lie below that and above half of it.
func TestMemoryOfCelebARun(t *testing.T) {
	s := Defaults("celeba")
	s.Model = "resnet18"
	var tasks []data.Task
	for range 10 {
		tasks = append(tasks, data.Task{Name: "a", Kind: data.Classification, Classes: 2})
	}
	cfg, err := s.engineConfig(shaped{tasks: tasks, shape: []int{3, 64, 64}}, Components{})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := s.memory(cfg, 19_962, 2)
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, p := range parts {
		total += p.Bytes
	}
	if total < 3.1e9 || total > 6.3e9 {
		t.Errorf("estimate %.2f GB, want between 3.1 GB and the 6.2 GB measured (+ the evaluation): %+v", total/1e9, parts)
	}
}

// manyRows is a data set that claims 2^30 examples, so that the graphs
// take whole batches of any size; New reads none of them.
type manyRows struct{ data.Dataset }

func (manyRows) Len() int { return 1 << 30 }

// shaped is a data set with the given tasks and input shape, to build a
// model from: it claims more examples than a batch (so that the graphs
// take whole batches) but holds none.
type shaped struct {
	tasks []data.Task
	shape []int
}

func (d shaped) Name() string                            { return "shaped" }
func (d shaped) Tasks() []data.Task                      { return d.tasks }
func (d shaped) InputShape() []int                       { return d.shape }
func (d shaped) Len() int                                { return 1 << 20 }
func (d shaped) Example(int, []float32, []float32) error { return errors.New("no examples") }

// A heads-first step keeps every particle's trunk forward pass between
// its two evaluations: the estimate of such a run exceeds the joint
// order's by the particles times engine.KeptBytes, and KeptBytes is
// positive for LeNet.
func TestMemoryCountsKeptTrunks(t *testing.T) {
	s := Defaults("multi-mnist")
	tasks := []data.Task{{Name: "a", Kind: data.Classification, Classes: 10}, {Name: "b", Kind: data.Classification, Classes: 10}}
	cfg, err := s.engineConfig(shaped{tasks: tasks, shape: []int{1, 36, 36}}, Components{})
	if err != nil {
		t.Fatal(err)
	}
	total := func(order UpdateOrder) float64 {
		s.Order = order
		parts, err := s.memory(cfg, 10_000, 2)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, p := range parts {
			sum += p.Bytes
		}
		return sum
	}
	kept, err := engine.KeptBytes(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if kept <= 0 {
		t.Fatalf("KeptBytes = %.0f for LeNet", kept)
	}
	across, err := engine.AcrossBytes(cfg, s.Particles, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	headsFirst, err := engine.AcrossBytes(cfg, s.Particles, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if across <= 0 || headsFirst <= across {
		t.Fatalf("AcrossBytes = %.0f jointly, %.0f heads first, for LeNet; want 0 < jointly < heads first", across, headsFirst)
	}
	// Heads first, the particles' trunk passes are kept and each of the 2
	// workers stacks one pass more than jointly (the repulsion's).
	if d, want := total(OrderHeadsFirst)-total(OrderJoint), float64(s.Particles)*kept+2*headsFirst-2*across; d != want {
		t.Errorf("heads-first adds %.0f bytes, want %d particles × %.0f + 2 workers × (%.0f − %.0f) = %.0f", d, s.Particles, kept, headsFirst, across, want)
	}
}
