package particles

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// Grams implements DeviceRule: G = ΘΘᵀ, P = SSᵀ and, unless only the
// first term is wanted, Q = SΘᵀ.
func (r *MTSGD) Grams(e DeviceEnsemble) []Gram {
	km := e.K * e.M
	gs := []Gram{{X: e.Theta, Y: e.Theta, Rows: e.M, Cols: e.M}, {X: e.Scores, Y: e.Scores, Rows: km, Cols: km}}
	if !r.FirstTermOnly {
		gs = append(gs, Gram{X: e.Scores, Y: e.Theta, Rows: km, Cols: e.M})
	}
	return gs
}

// DirectionOnDevice implements DeviceRule: U's a_ij = Σ_ab k_ab ⟨s_ia,
// s_jb⟩ from P = SSᵀ and r_i = Σ_ab k_ab ⟨s_ia, θ_a − θ_b⟩ from Q = SΘᵀ;
// U is formed and the QP solved on the host as Direction does.
func (r *MTSGD) DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	return directionOnDevice(r, "mtsgd", dev, dst, e)
}

// DirectionFromGrams implements DeviceRule.
func (r *MTSGD) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, prods [][]float64) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	defer w.release()
	if err := checkGrams(prods, r.Grams(e)); err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	m, k, d, km := e.M, e.K, e.D, e.K*e.M
	kern := &r.km
	kernelFromGram(r.Kernel, kern, prods[0], m)
	r.alloc(k)
	p := prods[1]
	a := make([]float64, k*k)
	for i := range k {
		for j := i; j < k; j++ {
			var s float64
			for x := range m {
				for y := range m {
					s += kern.k[x][y] * p[(i*m+x)*km+j*m+y]
				}
			}
			a[i*k+j] = s
		}
	}
	if !r.FirstTermOnly {
		q := prods[2]
		sign := 1.0
		if e.Negated {
			sign = -1 // (−S)Θᵀ
		}
		for i := range k {
			for x := range m {
				row := q[(i*m+x)*m:]
				for y := range m {
					r.r[i] += kern.k[x][y] * (sign*row[x] - sign*row[y])
				}
			}
		}
	}
	if err := r.solve(kern, a, math.Sqrt(kern.sigma2), m, d); err != nil {
		return err
	}
	b, a := stein(kern, r.w, r.Repulsion, m, &r.stein)
	if err := w.mix(dst, b, a); err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	return nil
}
