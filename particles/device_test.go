//go:build cgo

package particles

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
)

// TestDirectionOnDevice runs MT-SGD's matrix-product form on the emulated
// GPU against Direction on the same ensembles: U, w* and φ* agree to 1e-10
// relative (Gram-matrix distances and reordered sums against direct ones,
// in float64).
func TestDirectionOnDevice(t *testing.T) {
	dev := kernels.NewEmulator()
	defer dev.Close()
	for seed := range uint64(6) {
		m, k, d := []int{1, 3, 5}[seed%3], 1+int(seed%3), []int{7, 300}[seed%2]
		for _, first := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed=%d/M=%d/K=%d/d=%d/firstTermOnly=%v", seed, m, k, d, first), func(t *testing.T) {
				e := randomEnsemble(rand.New(rand.NewPCG(seed, 7)), m, k, d)
				cpu := &MTSGD{Repulsion: 0.7, FirstTermOnly: first}
				want := make([][]float64, m)
				for i := range want {
					want[i] = make([]float64, d)
				}
				if err := cpu.Direction(want, e); err != nil {
					t.Fatal(err)
				}

				upload := func(rows [][]float64) gpu.Ptr {
					var flat []float64
					for _, r := range rows {
						flat = append(flat, r...)
					}
					p, err := dev.Alloc(8 * len(flat))
					if err != nil {
						t.Fatal(err)
					}
					if err := dev.Upload(p, gpu.Bytes(flat)); err != nil {
						t.Fatal(err)
					}
					return p
				}
				var all [][]float64
				for _, s := range e.Scores {
					all = append(all, s...)
				}
				theta, scores := upload(e.Theta), upload(all)
				dst, err := dev.Alloc(8 * m * d)
				if err != nil {
					t.Fatal(err)
				}
				gpuRule := &MTSGD{Repulsion: 0.7, FirstTermOnly: first}
				if err := gpuRule.DirectionOnDevice(dev, dst, theta, scores, m, k, d); err != nil {
					t.Fatal(err)
				}
				got := make([]float64, m*d)
				if err := dev.Download(gpu.Bytes(got), dst); err != nil {
					t.Fatal(err)
				}
				for _, p := range []gpu.Ptr{theta, scores, dst} {
					dev.Free(p)
				}
				if n := dev.Live(); n != 0 {
					t.Errorf("%d device buffers left", n)
				}

				near(t, "U", gpuRule.Diagnostics().U, cpu.Diagnostics().U, 1e-10)
				near(t, "w*", gpuRule.Diagnostics().Weights, cpu.Diagnostics().Weights, 1e-8)
				var flat []float64
				for _, r := range want {
					flat = append(flat, r...)
				}
				near(t, "φ*", got, flat, 1e-10)
			})
		}
	}
}

// near fails unless got and want agree to tol relative to the largest
// |want|.
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}
