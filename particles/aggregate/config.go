package aggregate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ConFIG is conflict-free inverse gradients (Liu, Chu & Thuerey,
// "ConFIG: Towards Conflict-free Training of Physics Informed Neural
// Networks", ICLR 2025, Eq. 2; the torchjd library's ConFIG): the
// direction makes the same angle with every task's gradient, and its
// length is the sum of the gradients' projections onto it,
//
//	u = U⁺·1,  û = u/‖u‖,  d = (Σᵢ gᵢ·û) û,
//
// where U is the K×d matrix of unit gradients gᵢ/‖gᵢ‖ and U⁺ its
// pseudo-inverse: u is the shortest vector with u·gᵢ/‖gᵢ‖ = 1 for every
// task where such vectors exist (independent gradients), the least-squares
// one otherwise. So û depends on the gradients' directions alone, and
// when the gradients are independent d·gᵢ/‖gᵢ‖ is the same positive
// number for every task: no task conflicts with d.
//
// Everything is computed from the Gram matrix GGᵀ: with A = UUᵀ
// (A_ij = gᵢ·gⱼ/‖gᵢ‖‖gⱼ‖) and y = A⁺·1, u = Uᵀy = Σⱼ cⱼ gⱼ with
// cⱼ = yⱼ/‖gⱼ‖, so d = Gᵀw with w = c·(1ᵀGGᵀc)/(cᵀGGᵀc). A⁺ comes from
// A's eigendecomposition, its eigenvalues at or below 1e-8 of the
// largest taken as zero: singular values of U below 1e-4 of the largest.
// Rounding in a Gram matrix of gradients with 10⁷ entries can reach 1e-9
// of it, so a direction resolved below that would be noise. torchjd
// takes the pseudo-inverse of U itself, cutting singular values below
// max(K, d) times the dtype's epsilon of the largest (in float32 and for
// d = 10⁶, 0.12 of it). A zero gradient has no direction: its row of U
// is 0 (as torchjd's nan_to_num makes it) and it adds nothing to d.
// When u = 0 (two opposite gradients and nothing else, say), d = 0, as
// torchjd's normalisation of a zero vector gives.
//
// Scale: the sum of the gradients' projections onto û, which is the
// length of the sum of the gradients when they are all parallel, as in
// the paper and torchjd. Sign: the gradients are loss gradients and d is
// a descent direction for θ ← θ − lr·d; GGᵀ is unchanged by negating G,
// so w is, and d is negated.
//
// ConFIG has no parameters (torchjd's optional preference vector, which
// replaces the 1 in u = U⁺·1, is not offered): its zero value is ready to
// use. It computes on the host (on a GPU host, from the gradients copied
// there), in O(K²d) operations for the Gram matrix and a K×K
// eigendecomposition.
type ConFIG struct {
	gram, units, y, c, w []float64
	norms                []float64
	eigen                mat.EigenSym
	vectors              mat.Dense
}

// configCutoff is the relative eigenvalue of A = UUᵀ at or below which
// ConFIG's pseudo-inverse treats it as zero.
const configCutoff = 1e-8

// Aggregate implements Aggregator.
func (a *ConFIG) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, _, err := checkGradients("config", dst, g)
	if err != nil {
		return err
	}
	a.gram = gramInto(a.gram, g)
	a.norms = growFloats(a.norms, k)
	for i := range k {
		a.norms[i] = math.Sqrt(a.gram[i*k+i])
	}
	a.units = growFloats(a.units, k*k)
	for i := range k {
		for j := range k {
			a.units[i*k+j] = 0
			if a.norms[i] > 0 && a.norms[j] > 0 {
				a.units[i*k+j] = a.gram[i*k+j] / (a.norms[i] * a.norms[j])
			}
		}
	}
	if err := a.pseudoInverseOnes(k); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	a.c = growFloats(a.c, k)
	for j := range k {
		a.c[j] = 0
		if a.norms[j] > 0 {
			a.c[j] = a.y[j] / a.norms[j]
		}
	}
	// 1ᵀGGᵀc, the projections' sum times ‖u‖, and cᵀGGᵀc = ‖u‖².
	sum, norm2 := 0.0, 0.0
	for i := range k {
		gc := 0.0
		for j := range k {
			gc += a.gram[i*k+j] * a.c[j]
		}
		sum += gc
		norm2 += a.c[i] * gc
	}
	a.w = growFloats(a.w, k)
	for j := range k {
		a.w[j] = 0
		if norm2 > 0 {
			a.w[j] = a.c[j] * sum / norm2
		}
	}
	combineRows(dst, a.w, g)
	return nil
}

// pseudoInverseOnes writes y = A⁺·1 for the K×K unit Gram matrix in
// a.units.
func (a *ConFIG) pseudoInverseOnes(k int) error {
	a.y = growFloats(a.y, k)
	clear(a.y)
	if !a.eigen.Factorize(mat.NewSymDense(k, a.units), true) {
		return fmt.Errorf("the eigendecomposition of the %d×%d unit Gram matrix failed", k, k)
	}
	values := a.eigen.Values(nil)
	a.vectors.Reset() // K may differ from the last call's
	a.eigen.VectorsTo(&a.vectors)
	largest := 0.0
	for _, v := range values {
		largest = math.Max(largest, v)
	}
	for l, v := range values {
		if v <= configCutoff*largest {
			continue
		}
		along := 0.0 // v_lᵀ·1
		for i := range k {
			along += a.vectors.At(i, l)
		}
		for i := range k {
			a.y[i] += a.vectors.At(i, l) * along / v
		}
	}
	return nil
}
