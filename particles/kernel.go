package particles

import (
	"fmt"
	"math"
	"slices"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// RBF is the kernel k(θ,θ') = exp(−‖θ−θ'‖²/(2σ²)).
//
// Unless Bandwidth is set, σ follows the median heuristic of the official
// MT-SGD code: h = med/(2·log(M+1)) and σ = sqrt(h)·Scale, where med is the
// median (numpy's, averaging the two middle values) of all M² squared
// distances ‖θ_a−θ_b‖², the zero diagonal included. This makes the kernel
// between two particles at the median distance exactly 1/(M+1) for Scale 1.
// When med is 0 (one particle, or all particles at one point) h is taken as 1.
type RBF struct {
	Scale     float64 // multiplies the median-heuristic σ; 0 means 1
	Bandwidth float64 // if > 0, a fixed σ and no median heuristic
}

// kernelMatrix is the kernel evaluated on one ensemble, with what the rules
// derive from it. It keeps its buffers between steps.
type kernelMatrix struct {
	sigma2 float64
	k      [][]float64 // k[a][b] = k(θ_a, θ_b)
	d2     [][]float64 // d2[a][b] = ‖θ_a − θ_b‖²
	// rep[m] = Σ_a k(θ_a,θ_m)(θ_m − θ_a) = σ²·Σ_a ∇_{θ_a} k(θ_a, θ_m):
	// the repulsive force on particle m, up to the factor 1/σ².
	rep    [][]float64
	sorted []float64
}

// compute evaluates the kernel on theta and the repulsive forces.
func (r RBF) compute(km *kernelMatrix, theta [][]float64) {
	r.evaluate(km, theta)
	km.rep = grow(km.rep, len(theta), len(theta[0]))
	for mm := range km.rep {
		km.repBlock(km.rep[mm], theta, mm, 0)
	}
}

// evaluate sets the kernel matrix, the squared distances and σ² for
// theta, and no repulsive forces (km.rep = nil): a rule that streams over
// the coordinates computes them a block at a time (repBlock).
func (r RBF) evaluate(km *kernelMatrix, theta [][]float64) {
	m := len(theta)
	km.d2 = grow(km.d2, m, m)
	km.rep = nil
	var pairs [][2]int
	for a := range m {
		km.d2[a][a] = 0
		for b := a + 1; b < m; b++ {
			pairs = append(pairs, [2]int{a, b})
		}
	}
	// Each pair's distance is one sum in coordinate order, whichever
	// goroutine takes it: networks' pairs run side by side.
	parallelItems(len(pairs), m > 0 && len(theta[0]) >= 8*blockSize, func(p int) {
		a, b := pairs[p][0], pairs[p][1]
		s := 0.0
		for i, x := range theta[a] {
			diff := x - theta[b][i]
			s += diff * diff
		}
		km.d2[a][b], km.d2[b][a] = s, s
	})
	r.fromDistances(km)
}

// fromDistances sets σ² and the kernel matrix from the squared distances
// km.d2.
func (r RBF) fromDistances(km *kernelMatrix) {
	m := len(km.d2)
	km.k = grow(km.k, m, m)
	if cap(km.sorted) < m*(m-1)/2 {
		km.sorted = make([]float64, 0, m*(m-1)/2)
	}
	km.sigma2 = r.sigma2(km.d2, km.sorted)
	for a := range m {
		km.k[a][a] = 1
		for b := a + 1; b < m; b++ {
			v := math.Exp(-km.d2[a][b] / (2 * km.sigma2))
			km.k[a][b], km.k[b][a] = v, v
		}
	}
}

// repBlock writes coordinates lo..lo+len(dst)-1 of rep[mm] into dst.
func (km *kernelMatrix) repBlock(dst []float64, theta [][]float64, mm, lo int) {
	clear(dst)
	x := theta[mm][lo : lo+len(dst)]
	for a := range theta {
		if a == mm {
			continue
		}
		kam := km.k[a][mm]
		y := theta[a][lo : lo+len(dst)]
		for i := range dst {
			dst[i] += kam * (x[i] - y[i])
		}
	}
}

// sigma2 returns σ² for the squared-distance matrix d2.
func (r RBF) sigma2(d2 [][]float64, buf []float64) float64 {
	if r.Bandwidth > 0 {
		return r.Bandwidth * r.Bandwidth
	}
	scale := r.Scale
	if scale == 0 {
		scale = 1
	}
	m := len(d2)
	// The M² entries are M zeros and every pair's distance twice, so sorting
	// the pairs alone gives the median: entry i ≥ M of the sorted M² list is
	// pair (i−M)/2.
	pairs := buf[:0]
	for a := range m {
		pairs = append(pairs, d2[a][a+1:]...)
	}
	slices.Sort(pairs)
	entry := func(i int) float64 {
		if i < m {
			return 0
		}
		return pairs[(i-m)/2]
	}
	n := m * m
	med := entry(n / 2)
	if n%2 == 0 {
		med = (entry(n/2-1) + entry(n/2)) / 2
	}
	h := med / (2 * math.Log(float64(m)+1))
	if h == 0 {
		h = 1
	}
	return h * scale * scale
}

// smooth writes dst[m] = Σ_a k(θ_a, θ_m)·v[a] for every particle m: the
// driving term of SVGD-type updates, before the 1/M factor.
func (km *kernelMatrix) smooth(dst, v [][]float64) {
	for m := range dst {
		for i := range dst[m] {
			dst[m][i] = 0
		}
		for a := range v {
			axpy(dst[m], km.k[a][m], v[a])
		}
	}
}

// stein writes the Stein direction (1/M)·(smoothed[m] + ρ·rep[m]/σ²) into
// dst[m] for every particle.
func (km *kernelMatrix) stein(dst, smoothed [][]float64, repulsion float64) {
	m := float64(len(dst))
	c := repulsion / km.sigma2
	for i := range dst {
		for j := range dst[i] {
			dst[i][j] = (smoothed[i][j] + c*km.rep[i][j]) / m
		}
	}
}

// steinSmoother turns one driving vector g_a per particle into the SVGD
// direction φ(θ_m) = (1/M) Σ_a [k(θ_a,θ_m)·g_a + ρ·∇_{θ_a}k(θ_a,θ_m)].
type steinSmoother struct {
	km       kernelMatrix
	smoothed [][]float64
}

// direction uses the ensemble's own kernel when it has one (see
// Ensemble.Kernel), the RBF kernel over the positions otherwise.
func (s *steinSmoother) direction(dst [][]float64, e Ensemble, g [][]float64, kernel RBF, repulsion float64) {
	s.smoothed = grow(s.smoothed, len(e.Theta), len(e.Theta[0]))
	km := &s.km
	if e.Kernel != nil {
		km = e.Kernel.matrix()
	} else {
		kernel.compute(km, e.Theta)
	}
	km.smooth(s.smoothed, g)
	km.stein(dst, s.smoothed, repulsion)
}

// Kernel is a kernel matrix evaluated outside the rule, for a kernel of
// some function of the positions rather than of the positions themselves:
// for a network, of the trunk's features or a head's outputs on the
// current batch, k(θ_a,θ_b) = κ(f(θ_a), f(θ_b)) with κ an RBF kernel (see
// RBF.Evaluate). The rules that use a kernel take it in place of their own
// RBF over the positions when Ensemble.Kernel is set.
type Kernel struct {
	// K[a][b] = k(θ_a, θ_b), M×M.
	K [][]float64
	// Repulsion[m] = −∇_{θ_m} Σ_a k(θ_m, θ_a), of the positions' length:
	// the kernel-gradient term of particle m. For a kernel that depends
	// on θ_m − θ_a alone this equals SVGD's Σ_a ∇_{θ_a}k(θ_a,θ_m); for a
	// kernel of f(θ) the two differ, and SVGD's form would need every
	// particle's Jacobian applied to every other's vector (M² products
	// instead of M). This form is the authors' code's: the gradient of
	// the kernel sum, which pushes f(θ_m) away from the others.
	Repulsion [][]float64
	// Sigma is κ's bandwidth, for diagnostics.
	Sigma float64
}

// matrix views k as the rules' kernel matrix: the repulsion is already
// divided by σ², so σ² is taken as 1. It has no squared distances: rules
// that need them (MT-SGD's full U) refuse a Kernel.
func (k *Kernel) matrix() *kernelMatrix {
	return &kernelMatrix{sigma2: 1, k: k.K, rep: k.Repulsion}
}

// check reports whether k fits m particles of dimension d.
func (k *Kernel) check(m, d int) error {
	if len(k.K) != m || len(k.Repulsion) != m {
		return fmt.Errorf("particles: kernel of %d×%d entries and %d repulsion vectors for %d particles", len(k.K), len(k.K), len(k.Repulsion), m)
	}
	for a := range m {
		if len(k.K[a]) != m {
			return fmt.Errorf("particles: kernel row %d has %d entries, want %d", a, len(k.K[a]), m)
		}
		if !asm.AllFinite(k.K[a]) {
			return fmt.Errorf("particles: kernel row %d is not finite", a)
		}
		if len(k.Repulsion[a]) != d {
			return fmt.Errorf("particles: repulsion of particle %d has dimension %d, want %d", a, len(k.Repulsion[a]), d)
		}
		if !asm.AllFinite(k.Repulsion[a]) {
			return fmt.Errorf("particles: repulsion of particle %d is not finite", a)
		}
	}
	return nil
}

// Evaluate evaluates the RBF kernel on points x[m] (one per particle, all
// of one length) into dst: dst.K[a][b] = exp(−‖x_a − x_b‖²/(2σ²)) with
// the bandwidth of r, and dst.Repulsion[m] = −∇_{x_m} Σ_a k(x_m, x_a) =
// Σ_a k(x_a,x_m)·(x_m − x_a)/σ², in x's space. A caller whose x is a
// function f of the positions maps dst.Repulsion[m] back through f's
// Jacobian at θ_m (a vector-Jacobian product) before handing dst to a
// rule. dst's slices are reused when their shapes fit.
func (r RBF) Evaluate(dst *Kernel, x [][]float64) {
	var km kernelMatrix
	km.k, km.rep = dst.K, dst.Repulsion
	r.compute(&km, x)
	for _, v := range km.rep {
		scaleBy(v, 1/km.sigma2)
	}
	dst.K, dst.Repulsion, dst.Sigma = km.k, km.rep, math.Sqrt(km.sigma2)
}

func scaleBy(v []float64, a float64) {
	for i := range v {
		v[i] *= a
	}
}

// KernelMemory is a lower bound on the bytes a kernel rule (MTSGD, SVGD,
// MOOSVGD) keeps between steps for m particles: the M×M
// kernel and squared-distance matrices and the M(M−1)/2 pair distances
// the median heuristic sorts (200 GB at M = 100,000). MTSGD keeps no
// vector of length d (it streams over blocks of coordinates); SVGD and
// MOOSVGD keep two per particle (combined and smoothed scores), and the
// other rules at most one, which this bound leaves out.
func KernelMemory(m int) float64 {
	mf := float64(m)
	return 8 * 2.5 * mf * mf
}
