package particles

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// DirectionOnDevice is Direction for an ensemble held on a GPU (package
// internal/gpu), in float64 and row-major: theta is M rows of d (particle
// a's position in row a), scores K·M rows of d (row i·M + a is s_ia, task
// i's score at particle a), and dst M rows of d, which it overwrites and
// which must not overlap the others. The kernel is the RBF over the
// positions (no Ensemble.Kernel).
//
// Everything of length d is a matrix product on the device:
//
//	G = ΘΘᵀ (M×M): the squared distances G_aa + G_bb − 2G_ab, hence σ²
//	    and the kernel k_ab;
//	P = SSᵀ (KM×KM): a_ij = Σ_ab k_ab ⟨s_ia, s_jb⟩;
//	Q = SΘᵀ (KM×M): r_i = Σ_ab k_ab ⟨s_ia, θ_a − θ_b⟩;
//	φ* = B·S + A·Θ, with B[b][iM+a] = w*_i·k_ab/M and
//	    A = ρ/(σ²M)·(diag(Σ_a k_ab) − k): the smoothed combined scores and
//	    the repulsion ρ/σ²·Σ_a k_ab(θ_b − θ_a), over M.
//
// Only these small matrices travel to and from the host, where U is formed
// and the QP solved as Direction does. Distances from a Gram matrix lose
// the digits that ‖θ‖² has beyond ‖θ_a − θ_b‖²: negligible in float64
// unless the particles are closer than 1e-6 of their norms.
func (r *MTSGD) DirectionOnDevice(dev gpu.Device, dst, theta, scores gpu.Ptr, m, k, d int) error {
	if m < 1 || k < 1 || d < 1 {
		return fmt.Errorf("mtsgd on %s: %d particles, %d tasks, %d coordinates", dev.Name(), m, k, d)
	}
	km := k * m
	var bufs []gpu.Ptr
	defer func() {
		for _, p := range bufs {
			dev.Free(p)
		}
	}()
	alloc := func(n int) (gpu.Ptr, error) {
		p, err := dev.Alloc(8 * n)
		if err == nil {
			bufs = append(bufs, p)
		}
		return p, err
	}
	// product is out (rows×cols) = x·yᵀ for x rows×d and y cols×d, read
	// back to the host.
	product := func(x, y gpu.Ptr, rows, cols int) ([]float64, error) {
		out, err := alloc(rows * cols)
		if err != nil {
			return nil, err
		}
		if err := dev.Gemm(gpu.Float64, false, true, rows, cols, d, 1, x, d, y, d, 0, out, cols); err != nil {
			return nil, err
		}
		host := make([]float64, rows*cols)
		return host, dev.Download(gpu.Bytes(host), out)
	}
	g, err := product(theta, theta, m, m)
	if err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	kern := &r.km
	kern.rep = nil
	kern.d2 = grow(kern.d2, m, m)
	for a := range m {
		for b := range m {
			kern.d2[a][b] = max(0, g[a*m+a]+g[b*m+b]-2*g[a*m+b])
		}
		kern.d2[a][a] = 0
	}
	r.Kernel.fromDistances(kern)

	r.alloc(k)
	p, err := product(scores, scores, km, km)
	if err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
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
		q, err := product(scores, theta, km, m)
		if err != nil {
			return fmt.Errorf("mtsgd: %w", err)
		}
		for i := range k {
			for x := range m {
				row := q[(i*m+x)*m:]
				for y := range m {
					r.r[i] += kern.k[x][y] * (row[x] - row[y])
				}
			}
		}
	}
	if err := r.solve(kern, a, math.Sqrt(kern.sigma2), m, d); err != nil {
		return err
	}

	bm, am := make([]float64, m*km), make([]float64, m*m)
	c := r.Repulsion / (kern.sigma2 * float64(m))
	for b := range m {
		for x := range m {
			for i := range k {
				bm[b*km+i*m+x] = r.w[i] * kern.k[x][b] / float64(m)
			}
			am[b*m+x] -= c * kern.k[x][b]
			am[b*m+b] += c * kern.k[x][b]
		}
	}
	pb, err := alloc(m * km)
	if err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	pa, err := alloc(m * m)
	if err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	if err := dev.Upload(pb, gpu.Bytes(bm)); err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	if err := dev.Upload(pa, gpu.Bytes(am)); err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	if err := dev.Gemm(gpu.Float64, false, false, m, d, km, 1, pb, km, scores, d, 0, dst, d); err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	if err := dev.Gemm(gpu.Float64, false, false, m, d, m, 1, pa, m, theta, d, 1, dst, d); err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	return nil
}
