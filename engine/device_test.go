//go:build cgo

package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
	"github.com/mtsgd/mtsgd/models/mlp"
	"github.com/mtsgd/mtsgd/models/ops"
	"github.com/mtsgd/mtsgd/particles"
)

// testDevices are the devices the device tests run on: the emulator
// (package gpu/kernels), which runs the CUDA kernels' source on the CPU,
// and, in a build with -tags gpu on a host with a GPU, the GPU. With
// MTSGD_REQUIRE_GPU=1 a missing GPU fails the test instead of being left
// out.
func testDevices(t *testing.T) map[string]gpu.Device {
	devs := map[string]gpu.Device{"emulator": kernels.NewEmulator()}
	dev, err := cuda.Open(0)
	switch {
	case err == nil:
		devs["gpu"] = dev
		t.Cleanup(func() { dev.Close() })
	case os.Getenv("MTSGD_REQUIRE_GPU") == "1":
		t.Fatalf("MTSGD_REQUIRE_GPU=1: %v", err)
	default:
		t.Logf("on the emulator only: %v", err)
	}
	return devs
}

// A particle's whole gradient computation (every task's loss, its trunk
// and head gradients, the batch statistics, the features and outputs)
// gives on a device (testDevices) what it gives on the CPU, for LeNet,
// ResNet-18 (small) and the regression MLP, in float64 and float32, with
// padded batches. Tolerance: |dev − cpu| ≤ tol·(1 + max|cpu|)
// per vector, tol 1e-10 in float64 (the kernels sum in the CPU ops'
// order; matrix products may not) and 2e-4 in float32 (products summed
// in another order, through layers that amplify rounding).
//
// Also checked, on the device: every tensor the graphs computed lies in
// device memory the graph owns, so nothing fell back to the host (a
// Gorgonia op computing on the host would return Go memory: the residual
// sums of ResNet's gradient are Gorgonia's Add, which must reach the
// device engine).
func TestGradientsOnDevice(t *testing.T) {
	regression := []data.Task{{Name: "r1", Kind: data.Regression}, {Name: "r2", Kind: data.Regression}}
	cases := []struct {
		name string
		cfg  func(dt tensor.Dtype) *Config
		// batch makes n examples for cfg.
		batch func(rng *rand.Rand, n int) *data.Batch
		n     int // real examples, fewer than the batch
	}{
		{"lenet", func(dt tensor.Dtype) *Config { return testConfig(5, dt) }, func(rng *rand.Rand, n int) *data.Batch { return randomBatch(rng, n, 2) }, 4},
		{"resnet", func(dt tensor.Dtype) *Config { c := smallResNet(3); c.Dtype = dt; return c }, func(rng *rand.Rand, n int) *data.Batch { return imageBatch(rng, n, 2, 3) }, 2},
		{"mlp", func(dt tensor.Dtype) *Config {
			return &Config{Model: mlp.New(5, []int{8, 6}, 1, 1, 1), Tasks: regression, Batch: 7, Dtype: dt}
		}, func(rng *rand.Rand, n int) *data.Batch { return regressionBatch(rng, n, 5, 2) }, 6},
	}
	for name, dev := range testDevices(t) {
		for _, c := range cases {
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				t.Run(fmt.Sprintf("%s/%s/%v", name, c.name, dt), func(t *testing.T) {
					tol := 1e-10
					if dt == tensor.Float32 {
						tol = 2e-4
					}
					cpu := c.cfg(dt)
					onDev := *cpu
					onDev.Device = dev
					p := newTestParticle(t, cpu, 41)
					rng := rand.New(rand.NewPCG(42, 0))
					b := c.batch(rng, c.n)
					want, got := NewGrads(cpu), NewGrads(&onDev)
					mc, md := newTestMachine(t, cpu), newTestMachine(t, &onDev)
					if err := mc.gradients(p, load(t, cpu, b), want); err != nil {
						t.Fatal(err)
					}
					// Twice: the second run reuses every buffer.
					for range 2 {
						if err := md.gradients(p, load(t, &onDev, b), got); err != nil {
							t.Fatal(err)
						}
					}
					closeTo(t, "loss", got.Loss, want.Loss, tol)
					for j := range cpu.Tasks {
						closeTo(t, fmt.Sprintf("trunk gradient %d", j), got.Trunk[j], want.Trunk[j], tol)
						closeTo(t, fmt.Sprintf("head gradient %d", j), got.Head[j], want.Head[j], tol)
						closeTo(t, fmt.Sprintf("outputs %d", j), got.Outputs[j], want.Outputs[j], tol)
					}
					closeTo(t, "statistics", got.Stats, want.Stats, tol)
					closeTo(t, "features", got.Features, want.Features, tol)
					var devs []*ops.Device
					for _, sg := range md.steps {
						devs = append(devs, sg.dev)
						allOnDevice(t, sg.g, sg.dev)
					}
					if md.trunk != nil {
						// A replaying trunk graph returns the step graph's buffers.
						allOnDevice(t, md.trunk.g, append(devs, md.trunk.dev)...)
					}
				})
			}
		}
	}
}

func newTestMachine(t *testing.T, cfg *Config) *machine {
	t.Helper()
	m, err := newMachine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func regressionBatch(rng *rand.Rand, n, inputs, tasks int) *data.Batch {
	b := &data.Batch{Targets: make([][]float32, tasks)}
	for i := range n {
		b.Index = append(b.Index, i)
		for range inputs {
			b.Inputs = append(b.Inputs, float32(rng.NormFloat64()))
		}
		for j := range tasks {
			b.Targets[j] = append(b.Targets[j], float32(rng.NormFloat64()))
		}
	}
	return b
}

// closeTo fails unless |got − want| ≤ tol·(1 + max|want|) entry by entry.
func closeTo(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var scale float64
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*(1+scale)) {
			t.Fatalf("%s[%d] = %v on the device, %v on the CPU (|Δ| %.3g > %.3g)", what, i, got[i], want[i], d, tol*(1+scale))
		}
	}
}

// allOnDevice fails unless every tensor value of g lies in memory one of
// devs owns; scalars (the losses, the seed of the gradients) are on the
// host.
func allOnDevice(t *testing.T, g *gorgonia.ExprGraph, devs ...*ops.Device) {
	t.Helper()
	if slices.Contains(devs, nil) {
		t.Fatal("graph not placed on the device")
	}
	n := 0
	for _, node := range g.AllNodes() {
		v := node.Value()
		if _, scalar := v.(gorgonia.Scalar); v == nil || scalar {
			continue
		}
		if !slices.ContainsFunc(devs, func(d *ops.Device) bool { return d.Owns(v) }) {
			t.Fatalf("%v (%v): its value is not in the device's memory", node, node.Op())
		}
		n++
	}
	if n == 0 {
		t.Fatal("no tensor values")
	}
}

// Three training steps of an ensemble (3 particles, MT-SGD trunks, SVGD
// heads, SGD with momentum) with its graphs on a device (testDevices) leave the
// particles where the same steps on the CPU leave them, for LeNet and the
// small ResNet-18 with its running statistics, in float64 (tolerance as
// TestGradientsOnDevice's: 1e-10·(1 + max|θ|); the losses too).
func TestStepOnDevice(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   *Config
		batch func(rng *rand.Rand) *data.Batch
	}{
		{"lenet", testConfig(5, tensor.Float64), func(rng *rand.Rand) *data.Batch { return randomBatch(rng, 5, 2) }},
		{"resnet", smallResNet(3), func(rng *rand.Rand) *data.Batch { return imageBatch(rng, 3, 2, 3) }},
	} {
		for name, device := range testDevices(t) {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				onDev := *c.cfg
				onDev.Device = device
				cpu, err := New(c.cfg, 3, 51, sgd(0.05), 2)
				if err != nil {
					t.Fatal(err)
				}
				dev, err := New(&onDev, 3, 51, sgd(0.05), 2)
				if err != nil {
					t.Fatal(err)
				}
				update := Update{Trunk: &particles.MTSGD{}, Head: &particles.SVGD{}}
				rng := rand.New(rand.NewPCG(52, 0))
				for step := range 3 {
					b := c.batch(rng)
					want, err := cpu.Step(b, update)
					if err != nil {
						t.Fatal(err)
					}
					got, err := dev.Step(b, update)
					if err != nil {
						t.Fatal(err)
					}
					for j := range want {
						closeTo(t, fmt.Sprintf("step %d loss %d", step, j), got[j], want[j], 1e-10)
					}
				}
				for i, p := range cpu.Particles {
					q := dev.Particles[i]
					closeTo(t, fmt.Sprintf("particle %d trunk", i), q.Trunk, p.Trunk, 1e-10)
					for j := range p.Heads {
						closeTo(t, fmt.Sprintf("particle %d head %d", i, j), q.Heads[j], p.Heads[j], 1e-10)
					}
					closeTo(t, fmt.Sprintf("particle %d running statistics", i), q.Stats, p.Stats, 1e-10)
				}
			})
		}
	}
}
