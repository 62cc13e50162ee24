package engine

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/particles"
)

// Keeping each particle's trunk forward pass between a heads-first
// step's two evaluations (keepTrunks) changes no step beyond rounding:
// two ensembles from one seed, one keeping and one running the trunk
// forward again, take three heads-first steps with the kernels over
// outputs (the `authors` preset's order) on the same batches and must
// hold the same particles. Three particles on two workers, so that a
// worker sets one particle's pass aside while it runs another.
//
// The one difference in arithmetic: without keeping, the first
// evaluation's forward pass multiplies the filters by the patches a few
// examples at a time (it keeps no patches), the second by the whole
// batch's; kept, both read the whole batch's product. With gonum's BLAS
// (the tests' build) a product's entries do not depend on how many
// columns it has, so the particles must agree to the bit; OpenBLAS
// rounds products of other shapes differently, so there the bound is
// relative to the vectors' norms: 1e-6 in float32 (a float32 rounding
// unit is 6e-8; the particles, moved by float32 gradients times the
// learning rate, differed by 2e-9 to 6e-9 of their norms), 1e-12 in
// float64.
func TestKeptTrunksChangeNothing(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			same := sameUpToBLAS(t, dt, 1e-6, 1e-12, "differs with kept trunk passes")
			defer func(old bool) { keepTrunkPasses = old }(keepTrunkPasses)
			run := func(keep bool) *Trainer {
				keepTrunkPasses = keep
				e := newTrainerOf(t, dt, 3, 8, 0.05)
				rng := rand.New(rand.NewPCG(36, 0))
				for range 3 {
					if _, err := e.Step(randomBatch(rng, 8, 2), authorsUpdate()); err != nil {
						t.Fatal(err)
					}
				}
				if got := e.kept != nil; got != keep {
					t.Fatalf("keepTrunkPasses %v, the trainer kept the trunks: %v", keep, got)
				}
				return e
			}
			kept, again := run(true), run(false)
			sameParticles(same, kept, again)
		})
	}
}

// authorsUpdate is a heads-first step with the kernels over outputs, the
// `authors` preset's order.
func authorsUpdate() Update {
	return Update{
		Trunk:  &particles.MTSGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 0.3, FirstTermOnly: true},
		Head:   &particles.SVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 0.3},
		Kernel: KernelOutputs, OutputKernel: particles.RBF{Scale: 1}, HeadsFirst: true,
	}
}

// AcrossBytes for LeNet at batch 256 in float32, from its first layer's
// shapes (10 filters of 1×9×9 = 81 values over 28×28 = 784 positions per
// example, two tasks): per stacked particle, its filters and its forward
// product and two output gradients, 4·10·(81 + 3·256·784) = 24,087,720
// bytes, heads first one output gradient more (the repulsion's pass),
// 4·10·(81 + 4·256·784) = 32,115,960; the largest group of 5 particles on 2
// workers is 3, of 50 on 2 it is acrossMax = 4. With one task nothing is
// stacked.
func TestAcrossBytesOfLeNet(t *testing.T) {
	perParticle := map[bool]int{false: 4 * 10 * (81 + 3*256*784), true: 4 * 10 * (81 + 4*256*784)}
	for _, c := range []struct{ particles, workers, group int }{{5, 2, 3}, {50, 2, 4}, {1, 2, 1}, {4, 1, 4}} {
		for _, headsFirst := range []bool{false, true} {
			got, err := AcrossBytes(testConfig(256, tensor.Float32), c.particles, c.workers, headsFirst)
			if err != nil {
				t.Fatal(err)
			}
			if want := float64(c.group * perParticle[headsFirst]); got != want {
				t.Errorf("%d particles on %d workers, heads first %v: AcrossBytes = %.0f, want %d × %d = %.0f", c.particles, c.workers, headsFirst, got, c.group, perParticle[headsFirst], want)
			}
		}
	}
	one := testConfig(256, tensor.Float32)
	one.Tasks = one.Tasks[:1]
	if got, err := AcrossBytes(one, 5, 2, false); err != nil || got != 0 {
		t.Errorf("one task: AcrossBytes = %.0f, %v; want 0", got, err)
	}
}

// KeptBytes for LeNet at batch 256 in float32, from its layer shapes
// (models/lenet: 36×36 input, conv 1→10 9×9 → 28×28, pool → 14×14, conv
// 10→20 5×5 → 10×10, pool → 5×5, linear 500→50), per example: the first
// convolution's output 10·784 (its patches, the images', stay with the
// worker), the first pool's output and argmaxes 10·196 each, the second
// convolution's output 20·100 and patches 250·100, the second pool's
// output and argmaxes 20·25 each, the linear layer's output, input and
// kept output 50 + 500 + 50: 37,900 floats and 2,460 int32s, 161,440
// bytes.
func TestKeptBytesOfLeNet(t *testing.T) {
	got, err := KeptBytes(testConfig(256, tensor.Float32))
	if err != nil {
		t.Fatal(err)
	}
	if want := 256 * 161_440.0; got != want {
		t.Errorf("KeptBytes = %.0f, want %.0f", got, want)
	}
	one := testConfig(256, tensor.Float32)
	one.Tasks = one.Tasks[:1]
	if got, err := KeptBytes(one); err != nil || got != 0 {
		t.Errorf("one task: KeptBytes = %.0f, %v; want 0 (a step with one task keeps nothing)", got, err)
	}
}
