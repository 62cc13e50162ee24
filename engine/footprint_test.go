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

// GraphFootprint is close to what one worker's graphs hold after a
// step: the heap grown by a one-particle, one-worker ensemble after a
// step and an evaluation lies between 0.8 and 3 times the footprint at
// its batch size (the MLP 1.9, LeNet about 2.1 with its patches: the
// ops' scratch, which the footprint leaves out; LeNet 0.90 where its
// convolutions read their inputs rather than patches and run their
// pools, float32 with AVX-512: the count then exceeds what the graphs
// hold, some nodes' values not being held apart, which ones not tracked
// down).
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
			t.Logf("footprint %.1f MB, heap grown by %.1f MB: ratio %.2f", want/1e6, grown/1e6, grown/want)
			if ratio := grown / want; ratio < 0.8 || ratio > 3 {
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

// TestStepMultiplyAdds checks the step's arithmetic counted from the
// graphs against counts made by hand from the architectures' layer
// shapes (the floor's tables in docs/performance.md).
func TestStepMultiplyAdds(t *testing.T) {
	// LeNet at batch 256, two tasks of 10 classes, per example: conv1 10
	// filters of 1×9×9 over 28×28 positions, conv2 20 of 10×5×5 over
	// 10×10, fc 500→50, a head 50→10 per task. Backward per task: conv1's
	// filters only (its input is the images), every other layer's weights
	// and input.
	conv1, conv2, fc, head := 10*81*784, 20*250*100, 500*50, 50*10
	lenetForward := conv1 + conv2 + fc + 2*head
	lenetBackward := conv1 + 2*conv2 + 2*fc + 2*head
	lenet := 5 * 256 * (lenetForward + 2*lenetBackward)
	// ResNet-18 (torchvision's layers) on 3×64×64, ten 512→2 heads, batch
	// 64: per example, each convolution's filters × taps × positions.
	convs := []int{
		64 * 3 * 49 * 32 * 32,                                                                      // conv1, 7×7 stride 2
		64 * 64 * 9 * 16 * 16, 64 * 64 * 9 * 16 * 16, 64 * 64 * 9 * 16 * 16, 64 * 64 * 9 * 16 * 16, // layer1
		128 * 64 * 9 * 8 * 8, 128 * 128 * 9 * 8 * 8, 128 * 64 * 8 * 8, 128 * 128 * 9 * 8 * 8, 128 * 128 * 9 * 8 * 8, // layer2, the 1×1 shortcut third
		256 * 128 * 9 * 4 * 4, 256 * 256 * 9 * 4 * 4, 256 * 128 * 4 * 4, 256 * 256 * 9 * 4 * 4, 256 * 256 * 9 * 4 * 4,
		512 * 256 * 9 * 2 * 2, 512 * 512 * 9 * 2 * 2, 512 * 256 * 2 * 2, 512 * 512 * 9 * 2 * 2, 512 * 512 * 9 * 2 * 2,
	}
	trunk := 0
	for _, c := range convs {
		trunk += c
	}
	resnetForward := trunk + 10*512*2
	resnetBackward := 2*trunk - convs[0] + 2*512*2
	resnet := 5 * 64 * (resnetForward + 10*resnetBackward)

	celeba, _ := celebaStep(64, 10)
	for _, c := range []struct {
		name string
		cfg  *Config
		want int
	}{
		{"lenet", testConfig(256, tensor.Float32), lenet},
		{"resnet18", celeba, resnet},
	} {
		got, err := StepMultiplyAdds(c.cfg, 5)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != float64(c.want) {
			t.Errorf("%s: %.0f multiply-adds per step, want %d", c.name, got, c.want)
		}
		t.Logf("%s, 5 particles: %.1f GFLOP per step", c.name, 2*got/1e9)
	}
}
