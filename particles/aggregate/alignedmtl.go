package aggregate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// AlignedMTL is Aligned-MTL (Senushkin et al., "Independent Component
// Alignment for Multi-Task Learning", CVPR 2023, Algorithm 1): it
// replaces the task gradients by the closest ones whose Gram matrix is a
// multiple of the identity, with the smallest singular value of G as the
// common norm, and sums them. With the eigendecomposition of the Gram
// matrix GGᵀ = VΛVᵀ, kept to its rank r,
//
//	B = σ_min·V_r Λ_r^(−1/2) V_rᵀ,  σ_min = √λ_min (the least kept eigenvalue),
//	w = B·1,  d = Gᵀw = Σᵢ (BG)ᵢ,
//
// where the aligned gradients BG have Gram matrix B(GGᵀ)B = σ_min²·V_rV_rᵀ:
// orthogonal, of norm σ_min, on the span of the gradients.
//
// Rank cut-off: an eigenvalue counts when it exceeds λ_max·K·ε, ε the
// float64 machine epsilon 2⁻⁵² (the authors' code applies the same rule
// with float32's epsilon). With every gradient zero, d = 0.
//
// Scale: d is the sum of the aligned gradients (w = B·1), as in the
// authors' code and LibMTL; torchjd divides by K (the mean). Sign: the
// gradients are loss gradients and d is a descent direction for
// θ ← θ − lr·d; negating G leaves GGᵀ and w unchanged and negates d.
//
// AlignedMTL has no parameters: its zero value is ready to use. It
// computes on the host (on a GPU host, from the gradients copied there),
// in O(K²d) operations for the Gram matrix and O(K³) for gonum's
// mat.EigenSym.
type AlignedMTL struct {
	gram, w, b []float64
}

// Aggregate implements Aggregator.
func (a *AlignedMTL) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, _, err := checkGradients("aligned-mtl", dst, g)
	if err != nil {
		return err
	}
	a.gram = gramInto(a.gram, g)
	a.b = growFloats(a.b, k*k)
	if err := alignedMTLBalance(a.b, a.gram, k); err != nil {
		return fmt.Errorf("aligned-mtl: %w", err)
	}
	a.w = growFloats(a.w, k)
	for i := range k {
		a.w[i] = 0
		for j := range k {
			a.w[i] += a.b[i*k+j]
		}
	}
	combineRows(dst, a.w, g)
	return nil
}

// alignedMTLBalance writes the K×K balance matrix B of the Gram matrix
// gram into b (row-major); B = 0 when every gradient is zero.
func alignedMTLBalance(b, gram []float64, k int) error {
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(k, append([]float64(nil), gram...)), true) {
		return fmt.Errorf("the eigendecomposition of the Gram matrix failed")
	}
	values := eig.Values(nil) // ascending
	var v mat.Dense
	eig.VectorsTo(&v)
	clear(b)
	largest := values[k-1]
	if !(largest > 0) {
		return nil
	}
	cutoff := largest * float64(k) * float64Eps
	least := math.Inf(1)
	for _, l := range values {
		if l > cutoff {
			least = math.Min(least, l)
		}
	}
	sigma := math.Sqrt(least)
	for e, l := range values {
		if !(l > cutoff) {
			continue
		}
		f := sigma / math.Sqrt(l)
		for i := range k {
			for j := range k {
				b[i*k+j] += f * v.At(i, e) * v.At(j, e)
			}
		}
	}
	return nil
}
