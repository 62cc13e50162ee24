//go:build cgo

package engine

import (
	"math/rand/v2"
	"os"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
	"github.com/mtsgd/mtsgd/models/resnet18"
	"github.com/mtsgd/mtsgd/optim"
)

// BenchmarkStepOnDevice measures a training step on the GPU, the ensemble
// held there (see resident): the LeNet step of BenchmarkStep (5
// particles, batch 256, two tasks, float32, MT-SGD and SVGD, SGD) and the
// ResNet-18 step of BenchmarkResNetStep (5 particles, batch 64 of 3×64×64,
// ten tasks, Adam) and the paper's CelebA trunk (40 tasks). It reports ms/step and s/step, and what each step
// asks of the device (stepCounts); compare the times with BenchmarkStep
// and BenchmarkResNetStep, the CPU's, run on the same host one after the
// other. It needs a binary built with -tags gpu and a GPU
// (MTSGD_REQUIRE_GPU=1 makes a missing one fail); on a GPU host:
//
//	go test -c -tags gpu -o engine-gpu.test ./engine
//	./engine-gpu.test -test.run '^$' -test.bench 'StepOnDevice' -test.benchtime 10x
//
// MTSGD_BENCH_EMULATOR=1 runs it on the emulator instead, to check the
// benchmark itself (the times mean nothing there).
func BenchmarkStepOnDevice(b *testing.B) {
	benchDeviceCases(b, benchDevice(b), true)
}

// BenchmarkStepCounts reports what a steady-state step of
// BenchmarkStepOnDevice's LeNet and ResNet-18 ensembles asks of the
// device, counted on the emulator (reportCounts): the host asks the same
// of a GPU, so these are the GPU step's figures on any machine. Its times
// mean nothing. The ResNet-18 ensemble steps on batches of 2, not 64: the
// emulator takes tens of minutes for a step of 64, and nothing counted
// depends on the batch but the bytes uploaded (the LeNet step's counts
// are the same at 8 and 256, the ResNet-18 step's at 2 and 4).
func BenchmarkStepCounts(b *testing.B) {
	dev := kernels.NewEmulator()
	b.Cleanup(func() { dev.Close() })
	benchDeviceCases(b, dev, false)
}

// deviceBenchCase is an ensemble that BenchmarkStepOnDevice times and
// BenchmarkStepCounts counts: its config and batch (small for the
// emulator when counting, where only the bytes uploaded depend on the
// batch), its optimiser, and the unit of its time. Another model is
// benchmarked by adding one to deviceBenchCases.
type deviceBenchCase struct {
	name      string
	particles int
	step      func(counting bool) (*Config, *data.Batch)
	opt       func() optim.Optimizer
	perSecond float64
	unit      string
}

var deviceBenchCases = []deviceBenchCase{
	{"lenet", 5, func(bool) (*Config, *data.Batch) {
		const batch = 256
		return testConfig(batch, tensor.Float32), randomBatch(rand.New(rand.NewPCG(1, 0)), batch, 2)
	}, sgd(0.01), 1000, "ms/step"},
	// torchvision's ResNet-18 layout on CelebA's shape: 10 tasks, Adam.
	{"resnet18", 5, func(counting bool) (*Config, *data.Batch) {
		batch := 64
		if counting {
			batch = 2
		}
		return celebaStep(batch, 10)
	}, func() optim.Optimizer { return optim.NewAdam(5e-4) }, 1, "s/step"},
	// The paper's CelebA trunk (resnet18.Paper) as the paper trains it:
	// 40 tasks, batch 64, Adam. Counting on the emulator, it runs at width
	// 2 on 2 examples: launches and copies do not depend on either.
	{"paper-trunk", 5, func(counting bool) (*Config, *data.Batch) {
		const k = 40
		batch, width := 64, 64
		if counting {
			batch, width = 2, 2
		}
		cfg, in := celebaStep(batch, k)
		classes := make([]int, k)
		for j := range classes {
			classes[j] = 2
		}
		cfg.Model = resnet18.PaperSmall(width, resnet18.Side, classes...)
		return cfg, in
	}, func() optim.Optimizer { return optim.NewAdam(5e-4) }, 1, "s/step"},
}

// benchDeviceCases runs the steps of deviceBenchCases on dev, reporting
// their times if timed.
func benchDeviceCases(b *testing.B, dev gpu.Device, timed bool) {
	for _, c := range deviceBenchCases {
		b.Run(c.name, func(b *testing.B) {
			count := gpu.NewCounting(dev)
			cfg, in := c.step(!timed)
			cfg.Device = count
			e, err := New(cfg, c.particles, 1, c.opt, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			benchDeviceSteps(b, e, count, in, timed, c.perSecond, c.unit)
		})
	}
}

// heldBatchSet is a data set of a batch's examples, for a step to hold on
// the device (Trainer.Hold) as a run holds its training set.
type heldBatchSet struct {
	cfg *Config
	b   *data.Batch
}

func (s heldBatchSet) Name() string       { return "batch" }
func (s heldBatchSet) Tasks() []data.Task { return s.cfg.Tasks }
func (s heldBatchSet) InputShape() []int  { return s.cfg.Model.InputShape() }
func (s heldBatchSet) Len() int           { return s.b.Size() }
func (s heldBatchSet) Example(i int, x, y []float32) error {
	copy(x, s.b.Inputs[i*len(x):(i+1)*len(x)])
	for j := range y {
		y[j] = s.b.Targets[j][i]
	}
	return nil
}

// benchDevice is the GPU, or the emulator where MTSGD_BENCH_EMULATOR=1.
func benchDevice(b *testing.B) gpu.Device {
	if os.Getenv("MTSGD_BENCH_EMULATOR") == "1" {
		dev := kernels.NewEmulator()
		b.Cleanup(func() { dev.Close() })
		return dev
	}
	dev, err := cuda.Open(0)
	switch {
	case err == nil:
		b.Cleanup(func() { dev.Close() })
		return dev
	case os.Getenv("MTSGD_REQUIRE_GPU") == "1":
		b.Fatalf("MTSGD_REQUIRE_GPU=1: %v", err)
	}
	b.Skipf("no GPU: %v", err)
	return nil
}

// benchDeviceSteps runs b.N steps of e on in after one that builds the
// graphs and uploads the ensemble, waiting for the device after each.
// If timed, it reports the mean in unit (seconds times perSecond). It
// reports what each step asked of the device through count, e's device
// (stepCounts), and logs the kernels launched.
func benchDeviceSteps(b *testing.B, e *Trainer, count *gpu.Counting, in *data.Batch, timed bool, perSecond float64, unit string) {
	u := mtsgdUpdate()
	if ok, err := e.Hold(heldBatchSet{e.cfg, in}); err != nil || !ok {
		b.Fatalf("holding the batch on the device: %v, %v", ok, err)
	}
	if _, err := e.Step(in, u); err != nil {
		b.Fatal(err)
	}
	if e.res == nil {
		b.Fatal("the ensemble did not stay on the device")
	}
	before := count.Counts()
	b.ResetTimer()
	for range b.N {
		if _, err := e.Step(in, u); err != nil {
			b.Fatal(err)
		}
		if err := e.cfg.Device.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if timed {
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*perSecond, unit)
	}
	c := count.Counts().Sub(before)
	c.Syncs -= b.N // the benchmark's own
	reportCounts(b, c, b.N)
	b.ReportMetric(0, "ns/op")
}

// reportCounts reports counts c of n steps per step: the kernel launches
// (launches/step), the matrix products (GEMMs/step), the waits for the
// device (syncs/step: explicit syncs; each download waits too), the
// device allocations and frees, and the downloads and their bytes. It
// logs the launches of each kernel per step.
func reportCounts(b *testing.B, c gpu.Counts, n int) {
	per := func(v int) float64 { return float64(v) / float64(n) }
	b.ReportMetric(per(c.Launches), "launches/step")
	b.ReportMetric(per(c.Gemms), "GEMMs/step")
	b.ReportMetric(per(c.Syncs), "syncs/step")
	b.ReportMetric(per(c.Allocs), "allocs/step")
	b.ReportMetric(per(c.Frees), "frees/step")
	b.ReportMetric(per(c.Downloads), "downloads/step")
	b.ReportMetric(per(c.DownloadBytes), "download-B/step")
	b.ReportMetric(per(c.Uploads), "uploads/step")
	b.ReportMetric(per(c.UploadBytes), "upload-B/step")
	d := gpu.Counts{Allocs: c.Allocs / n, Frees: c.Frees / n, Uploads: c.Uploads / n, UploadBytes: c.UploadBytes / n,
		Downloads: c.Downloads / n, DownloadBytes: c.DownloadBytes / n, Launches: c.Launches / n, Gemms: c.Gemms / n,
		Syncs: c.Syncs / n, Kernels: map[string]int{}}
	for k, v := range c.Kernels {
		d.Kernels[k] = v / n
	}
	b.Logf("per step (of %d): %v", n, d)
}
