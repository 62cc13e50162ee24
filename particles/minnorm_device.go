package particles

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// The rules that solve one min-norm problem per particle (MGDA, MOO-SVGD,
// Pareto MTL) read each particle's Gram matrix of its own K scores: M
// blocks of K×K (Gram.Every), one strided-batched product on the device
// and M·K² values to the host, where the QPs are solved as Direction
// solves them; the direction is then a mix of the scores (and, for
// MOO-SVGD, the positions) on the device.

// ownGrams is the product list of a rule that reads each particle's
// K×K Gram matrix of its scores.
func ownGrams(e DeviceEnsemble) Gram {
	return Gram{X: e.Scores, Y: e.Scores, Rows: e.K, Cols: e.K, Every: e.M}
}

// ownBlock copies particle a's K×K block of grams (ownGrams) into u,
// symmetrised exactly (the QP solver checks symmetry; the product on a
// GPU need not sum s_i·s_j and s_j·s_i alike).
func ownBlock(u, grams []float64, a, k int) {
	block := grams[a*k*k : (a+1)*k*k]
	for i := range k {
		u[i*k+i] = block[i*k+i]
		for j := i + 1; j < k; j++ {
			v := (block[i*k+j] + block[j*k+i]) / 2
			u[i*k+j], u[j*k+i] = v, v
		}
	}
}

// minNormWeights solves each particle's QP from its block of grams:
// w[a] minimises ‖Σ_k w_k s_ka‖², as perParticleMinNorm.combine does.
func minNormWeights(qp *minnorm.Solver, grams []float64, m, k int) ([][]float64, error) {
	u := make([]float64, k*k)
	w := make([][]float64, m)
	for a := range m {
		ownBlock(u, grams, a, k)
		w[a] = make([]float64, k)
		if _, err := qp.Solve(w[a], u); err != nil {
			return nil, fmt.Errorf("particle %d: %w", a, err)
		}
	}
	return w, nil
}

// Grams implements DeviceRule: each particle's K×K Gram matrix.
func (r *MGDA) Grams(e DeviceEnsemble) []Gram { return []Gram{ownGrams(e)} }

// DirectionOnDevice implements DeviceRule.
func (r *MGDA) DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	return directionOnDevice(r, "mgda", dev, dst, e)
}

// DirectionFromGrams implements DeviceRule.
func (r *MGDA) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, grams [][]float64) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("mgda: %w", err)
	}
	defer w.release()
	if err := checkGrams(grams, r.Grams(e)); err != nil {
		return fmt.Errorf("mgda: %w", err)
	}
	weights, err := minNormWeights(&r.QP, grams[0], e.M, e.K)
	if err != nil {
		return fmt.Errorf("mgda: %w", err)
	}
	if err := w.mix(dst, ownMix(e.M, e.K, func(a, i int) float64 { return weights[a][i] }), nil); err != nil {
		return fmt.Errorf("mgda: %w", err)
	}
	return nil
}

// Grams implements DeviceRule: each particle's K×K Gram matrix, then
// G = ΘΘᵀ for the kernel.
func (r *MOOSVGD) Grams(e DeviceEnsemble) []Gram {
	return []Gram{ownGrams(e), {X: e.Theta, Y: e.Theta, Rows: e.M, Cols: e.M}}
}

// DirectionOnDevice implements DeviceRule.
func (r *MOOSVGD) DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	return directionOnDevice(r, "moo-svgd", dev, dst, e)
}

// DirectionFromGrams implements DeviceRule: with g_a = Σ_i w^a_i s_ia,
// φ(θ_y) = (1/M) Σ_a k(θ_a, θ_y)·g_a + A·Θ, A the repulsion as for SVGD
// (stein), so B[y, i·M + a] = w^a_i·k(θ_a, θ_y)/M.
func (r *MOOSVGD) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, grams [][]float64) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("moo-svgd: %w", err)
	}
	defer w.release()
	if err := checkGrams(grams, r.Grams(e)); err != nil {
		return fmt.Errorf("moo-svgd: %w", err)
	}
	weights, err := minNormWeights(&r.QP, grams[0], e.M, e.K)
	if err != nil {
		return fmt.Errorf("moo-svgd: %w", err)
	}
	km := &r.stein.km
	kernelFromGram(r.Kernel, km, grams[1], e.M)
	ones := make([]float64, e.K)
	for i := range ones {
		ones[i] = 1
	}
	b, a := stein(km, ones, r.Repulsion, e.M, new([]float64))
	m, k := e.M, e.K
	for y := range m {
		for i := range k {
			for x := range m {
				b[y*k*m+i*m+x] *= weights[x][i]
			}
		}
	}
	if err := w.mix(dst, b, a); err != nil {
		return fmt.Errorf("moo-svgd: %w", err)
	}
	return nil
}

// Grams implements DeviceRule: each particle's K×K Gram matrix.
func (r *ParetoMTL) Grams(e DeviceEnsemble) []Gram { return []Gram{ownGrams(e)} }

// DirectionOnDevice implements DeviceRule. It needs e.Values.
func (r *ParetoMTL) DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	return directionOnDevice(r, "pareto-mtl", dev, dst, e)
}

// DirectionFromGrams implements DeviceRule.
func (r *ParetoMTL) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, grams [][]float64) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("pareto-mtl: %w", err)
	}
	defer w.release()
	if err := checkGrams(grams, r.Grams(e)); err != nil {
		return fmt.Errorf("pareto-mtl: %w", err)
	}
	m, k := e.M, e.K
	if err := r.check(e.Values, m, k); err != nil {
		return err
	}
	r.h = resize(r.h, k*k)
	weights := make([][]float64, m)
	f := make([]float64, k)
	for i := range m {
		for t := range k {
			f[t] = e.Values[t][i]
		}
		ownBlock(r.h, grams[0], i, k)
		if weights[i], err = r.particleWeights(i, f, e.Step < r.InitSteps); err != nil {
			return err
		}
	}
	if err := w.mix(dst, ownMix(m, k, func(a, i int) float64 { return weights[a][i] }), nil); err != nil {
		return fmt.Errorf("pareto-mtl: %w", err)
	}
	return nil
}
