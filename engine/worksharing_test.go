package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/models/ops"
)

// A worker whose particles are done helps the other with its matrix
// products (onWorkers, ops.ShareWork), which changes no bit of a step: two
// ensembles of 5 LeNet particles on 2 workers (3 and 2 particles), batch
// 64 so that their products are large enough to be halved, one helping
// and one not, take two MT-SGD steps on the same batches and must hold
// the same particles, to the bit, in either BLAS. The idle worker must
// have run some half: the test leaves every half handed over to the
// helper (ops.LeaveHalvesToHelpers), since otherwise timing decides, and
// on a loaded machine the owner, still running, mostly takes its half
// back before the woken helper starts.
func TestHelpingChangesNothing(t *testing.T) {
	defer func(old bool) { shareIdle = old }(shareIdle)
	defer ops.LeaveHalvesToHelpers(ops.LeaveHalvesToHelpers(true))
	before := ops.SharedHalves()
	defer func() {
		if ops.SharedHalves() == before {
			t.Error("the idle worker ran no half of a product")
		}
	}()
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(fmt.Sprint(dt), func(t *testing.T) {
			run := func(help bool) *Trainer {
				shareIdle = help
				e := newTrainerOf(t, dt, 5, 64, 0.05)
				rng := rand.New(rand.NewPCG(41, 0))
				for range 2 {
					if _, err := e.Step(randomBatch(rng, 64, 2), mtsgdUpdate()); err != nil {
						t.Fatal(err)
					}
				}
				return e
			}
			helped := run(true)
			alone := run(false)
			for i, p := range helped.Particles {
				if !slices.Equal(p.Trunk, alone.Particles[i].Trunk) {
					t.Errorf("particle %d's trunk differs when helped", i)
				}
				for j := range p.Heads {
					if !slices.Equal(p.Heads[j], alone.Particles[i].Heads[j]) {
						t.Errorf("particle %d's head %d differs when helped", i, j)
					}
				}
			}
		})
	}
}
