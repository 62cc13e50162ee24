package aggregate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// IMTLG is the gradient part of impartial multi-task learning, IMTL-G
// (Liu et al., "Towards Impartial Multi-task Learning", ICLR 2021, the
// closed form of its gradient balance): the direction d = Σᵢ αᵢgᵢ, with
// weights summing to 1, whose projections onto the unit vectors
// uᵢ = gᵢ/‖gᵢ‖ are all equal, d·u₁ = d·u₂ = … = d·u_K. With
//
//	D = [g₁ − g₂, …, g₁ − g_K]ᵀ,  U = [u₁ − u₂, …, u₁ − u_K]ᵀ,
//
// the conditions d·(u₁ − uᵢ) = 0 give
//
//	(α₂, …, α_K) = g₁Uᵀ(DUᵀ)⁻¹,  α₁ = 1 − Σᵢ₌₂ αᵢ.
//
// D and U are formed from the vectors, not from the Gram matrix, so that
// nearly collinear gradients (u₁ − u₂ small) lose nothing to cancellation.
//
// The weights sum to 1: d is on the scale of the mean gradient (equal
// gradients give d = g). torchjd's IMTL-G computes the same weights from
// the Gram matrix as M⁺n/(1ᵀM⁺n), nᵢ = ‖gᵢ‖, with the pseudo-inverse M⁺:
// it agrees with this closed form when the gradients are linearly
// independent and differs when they are dependent (K > rank G), where
// the pseudo-inverse picks one of many weight vectors or none satisfies
// the equal projections.
//
// Aggregate returns an error wrapping ErrUndefined when a gradient is
// zero (its unit vector is undefined) and when DUᵀ is singular or too
// ill-conditioned to solve
// (condition number above 1e12), as for identical gradients (a zero
// row) and for K − 1 > the rank of the gradients' differences. With
// K = 1, d = g₁.
//
// Sign: the gradients are loss gradients and d is a descent direction
// for θ ← θ − lr·d; negating G negates D and U, leaves DUᵀ, g₁Uᵀ and α
// unchanged and negates d.
//
// IMTLG has no parameters: its zero value is ready to use. It computes
// on the host (on a GPU host, from the gradients copied there), in
// O(K²d) operations.
type IMTLG struct {
	norm, alpha []float64
	u           [][]float64 // rows u₁ − uᵢ, i = 2..K
	diff        []float64   // one row g₁ − gᵢ
}

// imtlgMaxCond is the largest condition number of DUᵀ solved.
const imtlgMaxCond = 1e12

// Aggregate implements Aggregator.
func (a *IMTLG) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, d, err := checkGradients("imtl-g", dst, g)
	if err != nil {
		return err
	}
	a.alpha = growFloats(a.alpha, k)
	if err := a.weights(a.alpha, g, k, d); err != nil {
		return fmt.Errorf("imtl-g: %w", err)
	}
	combineRows(dst, a.alpha, g)
	return nil
}

// weights writes the αᵢ of the closed form into alpha.
func (a *IMTLG) weights(alpha []float64, g [][]float64, k, d int) error {
	a.norm = growFloats(a.norm, k)
	for i := range k {
		a.norm[i] = math.Sqrt(dotProduct(g[i], g[i]))
		if a.norm[i] == 0 {
			return fmt.Errorf("the gradient of task %d is zero, without a unit vector: %w", i, ErrUndefined)
		}
	}
	if k == 1 {
		alpha[0] = 1
		return nil
	}
	n := k - 1
	if len(a.u) != n || len(a.u[0]) != d {
		a.u = make([][]float64, n)
		for i := range a.u {
			a.u[i] = make([]float64, d)
		}
	}
	for i := range n {
		for x := range d {
			a.u[i][x] = g[0][x]/a.norm[0] - g[i+1][x]/a.norm[i+1]
		}
	}
	// Solve (DUᵀ)ᵀβ = (g₁Uᵀ)ᵀ for β = (α₂, …, α_K).
	dut := mat.NewDense(n, n, nil)
	a.diff = growFloats(a.diff, d)
	for i := range n {
		for x := range d {
			a.diff[x] = g[0][x] - g[i+1][x]
		}
		for j := range n {
			dut.Set(i, j, dotProduct(a.diff, a.u[j]))
		}
	}
	rhs := mat.NewVecDense(n, nil)
	for j := range n {
		rhs.SetVec(j, dotProduct(g[0], a.u[j]))
	}
	var lu mat.LU
	lu.Factorize(dut)
	if c := lu.Cond(); !(c <= imtlgMaxCond) {
		return fmt.Errorf("DUᵀ is singular or ill-conditioned (condition number %.3g above %.0e), the gradients' differences linearly dependent: %w", c, imtlgMaxCond, ErrUndefined)
	}
	var beta mat.VecDense
	if err := lu.SolveVecTo(&beta, true, rhs); err != nil && !isConditionError(err) {
		return fmt.Errorf("solving with DUᵀ: %w", err)
	}
	alpha[0] = 1
	for i := range n {
		alpha[i+1] = beta.AtVec(i)
		alpha[0] -= alpha[i+1]
	}
	return nil
}
