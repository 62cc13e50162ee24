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
	"github.com/mtsgd/mtsgd/optim"
)

// BenchmarkStepOnDevice measures a training step on the GPU, the ensemble
// held there (see resident): the LeNet step of BenchmarkStep (5
// particles, batch 256, two tasks, float32, MT-SGD and SVGD, SGD) and the
// ResNet-18 step of BenchmarkResNetStep (5 particles, batch 64 of 3×64×64,
// ten tasks, Adam). It reports ms/step and s/step; compare them with
// BenchmarkStep and BenchmarkResNetStep, the CPU's, run on the same host
// one after the other. It needs a binary built with -tags gpu and a GPU
// (MTSGD_REQUIRE_GPU=1 makes a missing one fail); on a GPU host:
//
//	go test -c -tags gpu -o engine-gpu.test ./engine
//	./engine-gpu.test -test.run '^$' -test.bench 'StepOnDevice' -test.benchtime 10x
//
// MTSGD_BENCH_EMULATOR=1 runs it on the emulator instead, to check the
// benchmark itself (the times mean nothing there).
func BenchmarkStepOnDevice(b *testing.B) {
	dev := benchDevice(b)
	b.Run("lenet", func(b *testing.B) {
		const m, batch = 5, 256
		cfg := testConfig(batch, tensor.Float32)
		cfg.Device = dev
		e, err := New(cfg, m, 1, sgd(0.01), 1)
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		benchDeviceSteps(b, e, randomBatch(rand.New(rand.NewPCG(1, 0)), batch, 2), 1000, "ms/step")
	})
	b.Run("resnet18", func(b *testing.B) {
		const m, batch, k = 5, 64, 10
		cfg, in := celebaStep(batch, k)
		cfg.Device = dev
		e, err := New(cfg, m, 1, func() optim.Optimizer { return optim.NewAdam(5e-4) }, 1)
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		benchDeviceSteps(b, e, in, 1, "s/step")
	})
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

// benchDeviceSteps times b.N steps of e on in after one that builds the
// graphs and uploads the ensemble, waiting for the device after each, and
// reports the mean in unit (seconds times perSecond).
func benchDeviceSteps(b *testing.B, e *Trainer, in *data.Batch, perSecond float64, unit string) {
	u := mtsgdUpdate()
	if _, err := e.Step(in, u); err != nil {
		b.Fatal(err)
	}
	if e.res == nil {
		b.Fatal("the ensemble did not stay on the device")
	}
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
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*perSecond, unit)
	b.ReportMetric(0, "ns/op")
}
