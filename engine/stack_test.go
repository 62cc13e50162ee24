package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/tensor"
)

// Stacking the trunk passes' filter gradients (ops.Recording.
// StackFilterGrads) changes no step: two ensembles from one seed, one
// stacking and one not, take three MT-SGD steps on the same batches
// (float32 graphs: float32 trunk scores; float64: float64 scores) and
// must hold the same particles, and Gradients (unnegated float64
// gradients) the same values. With gonum's BLAS (the tests' build) each
// filter-gradient entry is the same dot product in the same order, so
// they must agree to the bit. OpenBLAS splits a product differently when
// it has more rows, so there the sums' order changes: the bound is then
// relative to the vectors' norms, 1e-5 in float32 (a few units of
// rounding on sums of 10⁴-10⁵ terms) and 1e-12 in float64.
func TestStackedFilterGradsChangeNothing(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			same := sameUpToBLAS(t, dt, 1e-5, 1e-12, "stacked differs from unstacked")
			defer func(old bool) { stackFilterGrads = old }(stackFilterGrads)
			run := func(stack bool) (*Trainer, *Grads) {
				stackFilterGrads = stack
				e := newTrainerOf(t, dt, 3, 8, 0.05)
				rng := rand.New(rand.NewPCG(30, 0))
				for range 3 {
					if _, err := e.Step(randomBatch(rng, 8, 2), mtsgdUpdate()); err != nil {
						t.Fatal(err)
					}
				}
				g := NewGrads(e.cfg)
				if err := e.Gradients(1, load(t, e.cfg, randomBatch(rng, 8, 2)), g); err != nil {
					t.Fatal(err)
				}
				return e, g
			}
			stacked, gs := run(true)
			plain, gp := run(false)
			for i := range stacked.Particles {
				same("trunk", stacked.Particles[i].Trunk, plain.Particles[i].Trunk)
				for j := range stacked.Particles[i].Heads {
					same("head", stacked.Particles[i].Heads[j], plain.Particles[i].Heads[j])
				}
			}
			for j := range gs.Trunk {
				same("trunk gradient", gs.Trunk[j], gp.Trunk[j])
				if slices.Equal(gs.Trunk[j], gp.Trunk[j]) && j > 0 && slices.Equal(gs.Trunk[j], gs.Trunk[0]) {
					t.Errorf("task %d's trunk gradient is task 0's", j)
				}
			}
		})
	}
}

// Stacking the passes of the particles a worker runs across them (the
// first convolution's forward product and filter gradients,
// ops.StackAcross) changes no step: two ensembles of 5 particles on 2
// workers (3 and 2 particles each), or of 9 (5, in groups of acrossMax =
// 4 and 1, and 4), from one seed, one stacking across them and one not
// (each still stacking its own passes' filter gradients), take three
// MT-SGD steps on the same batches and must hold the same particles.
//
// With gonum's BLAS (the tests' build) the 5 particles must agree to the
// bit: its product sums each entry over the whole inner dimension in
// one order unless the product has at least 4 blocks of 64×64 outputs,
// and then in blocks of 64 (the forward products always, stacked or
// not; the filter gradients, 81 columns, once they have more than 64
// rows: the 9 particles' groups of 4 stack 80). Where the order changes
// (OpenBLAS, whose blocks depend on the shape; gonum with 9 particles),
// the bound is 1e-6 of the vectors' norms in float32 (6e-8 is a float32
// rounding unit; the particles differ by rounding carried through three
// steps, measured 5e-11 with gonum) and 1e-12 in float64.
func TestStackAcrossParticlesChangesNothing(t *testing.T) {
	for _, c := range []struct {
		dt        tensor.Dtype
		particles int
	}{{tensor.Float32, 5}, {tensor.Float64, 5}, {tensor.Float32, 9}} {
		t.Run(fmt.Sprintf("%v/particles=%d", c.dt, c.particles), func(t *testing.T) {
			dt := c.dt
			same := sameUpToBLAS(t, dt, 1e-6, 1e-12, "differs when stacked across particles")
			if c.particles > 2*3 {
				same = sameUpTo(t, false, 1e-6, "differs when stacked across particles")
			}
			defer func(old bool) { stackAcrossParticles = old }(stackAcrossParticles)
			run := func(across bool) *Trainer {
				stackAcrossParticles = across
				e := newTrainerOf(t, dt, c.particles, 8, 0.05)
				rng := rand.New(rand.NewPCG(31, 0))
				for range 3 {
					if _, err := e.Step(randomBatch(rng, 8, 2), mtsgdUpdate()); err != nil {
						t.Fatal(err)
					}
				}
				if got := len(e.machines[0].across) > 0; got != across {
					t.Fatalf("stackAcrossParticles %v, a worker found convolutions to stack: %v", across, got)
				}
				return e
			}
			stacked, plain := run(true), run(false)
			sameParticles(same, stacked, plain)
		})
	}
}

// A heads-first step that keeps its trunk passes stacks the first
// convolution across a worker's particles in both evaluations: the
// heads-only pass's forward products, and the second pass's filter
// gradients of the tasks and of the repulsion riding along. Its steps
// are those without stacking, up to the products' rounding: with
// gonum's BLAS to the bit while the stacked filter gradients have at
// most 64 rows (4 particles on 2 workers: 2 particles × 3 passes × 10
// filters), else (5 particles: 3 on a worker, 90 rows; or OpenBLAS) to
// 1e-6 and 1e-12 of the norms, as above. Without keeping, the heads-only
// pass takes the patches a few examples at a time and stacks nothing.
func TestStackAcrossHeadsFirstChangesNothing(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, c := range []struct {
			particles int
			keep      bool
		}{{4, true}, {5, true}, {4, false}} {
			t.Run(fmt.Sprintf("%v/particles=%d/keep=%v", dt, c.particles, c.keep), func(t *testing.T) {
				same := sameUpToBLAS(t, dt, 1e-6, 1e-12, "differs when a heads-first step stacks across particles")
				if c.particles > 4 {
					same = sameUpTo(t, false, tolOf(dt, 1e-6, 1e-12), "differs when a heads-first step stacks across particles")
				}
				defer func(old, oldKeep bool) { stackAcrossParticles, keepTrunkPasses = old, oldKeep }(stackAcrossParticles, keepTrunkPasses)
				keepTrunkPasses = c.keep
				run := func(across bool) *Trainer {
					stackAcrossParticles = across
					e := newTrainerOf(t, dt, c.particles, 8, 0.05)
					rng := rand.New(rand.NewPCG(37, 0))
					for range 3 {
						if _, err := e.Step(randomBatch(rng, 8, 2), authorsUpdate()); err != nil {
							t.Fatal(err)
						}
					}
					if got := len(e.machines[0].headAcross) > 0; got != (across && c.keep) {
						t.Fatalf("stackAcrossParticles %v, the heads-only graph found convolutions to stack: %v", across, got)
					}
					return e
				}
				stacked, plain := run(true), run(false)
				sameParticles(same, stacked, plain)
			})
		}
	}
}

// sameUpToBLAS returns a check that two vectors agree: to the bit when
// the BLAS of dt's products is gonum's (the tests' build), whose entries
// do not depend on the products' shapes; else (OpenBLAS) to tol32 or
// tol64 (by dt) of want's norm. what says how they differ.
func sameUpToBLAS(t *testing.T, dt tensor.Dtype, tol32, tol64 float64, what string) func(name string, got, want []float64) {
	var bitwise bool
	if dt == tensor.Float32 {
		_, bitwise = blas32.Implementation().(gonum.Implementation)
	} else {
		_, bitwise = blas64.Implementation().(gonum.Implementation)
	}
	return sameUpTo(t, bitwise, tolOf(dt, tol32, tol64), what)
}

// tolOf is tol32 for float32, else tol64.
func tolOf(dt tensor.Dtype, tol32, tol64 float64) float64 {
	if dt == tensor.Float32 {
		return tol32
	}
	return tol64
}

// sameParticles checks with same that got's particles, trunks and
// heads, are want's.
func sameParticles(same func(name string, got, want []float64), got, want *Trainer) {
	for i, p := range got.Particles {
		same(fmt.Sprintf("particle %d's trunk", i), p.Trunk, want.Particles[i].Trunk)
		for j := range p.Heads {
			same(fmt.Sprintf("particle %d's head %d", i, j), p.Heads[j], want.Particles[i].Heads[j])
		}
	}
}

// sameUpTo returns a check that two vectors agree, to the bit if bitwise,
// else to tol of want's norm.
func sameUpTo(t *testing.T, bitwise bool, tol float64, what string) func(name string, got, want []float64) {
	return func(name string, got, want []float64) {
		t.Helper()
		if bitwise {
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s", name, what)
			}
			return
		}
		var d, n float64
		for i := range got {
			d += (got[i] - want[i]) * (got[i] - want[i])
			n += want[i] * want[i]
		}
		if math.Sqrt(d) > tol*math.Sqrt(n) {
			t.Errorf("%s: %s by %.3g of the norm", name, what, math.Sqrt(d/n))
		}
	}
}
