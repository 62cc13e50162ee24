// Package simplextest holds reference computations for tests of min-norm
// problems on the probability simplex, written independently of the
// solver in particles/minnorm.
package simplextest

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Objective returns wᵀUw for the K×K row-major matrix u.
func Objective(u, w []float64) float64 {
	k := len(w)
	f := 0.0
	for i := range k {
		for j := range k {
			f += w[i] * u[i*k+j] * w[j]
		}
	}
	return f
}

// Curvature returns λ⊥(U) = min{vᵀUv : ‖v‖ = 1, Σ v = 0}, the curvature of
// wᵀUw along the simplex: the smallest eigenvalue of VᵀUV for the Helmert
// basis V of the vectors that sum to zero, by gonum's symmetric
// eigensolver. A positive λ⊥ makes the minimiser unique.
func Curvature(u []float64, k int) (float64, error) {
	v := mat.NewDense(k, k-1, nil)
	for j := 1; j < k; j++ {
		n := math.Sqrt(float64(j * (j + 1)))
		for i := range j {
			v.Set(i, j-1, 1/n)
		}
		v.Set(j, j-1, -float64(j)/n)
	}
	var uv, vuv mat.Dense
	uv.Mul(mat.NewDense(k, k, u), v)
	vuv.Mul(v.T(), &uv)
	sym := mat.NewSymDense(k-1, nil)
	for i := range k - 1 {
		for j := i; j < k-1; j++ {
			sym.SetSym(i, j, (vuv.At(i, j)+vuv.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, false) {
		return 0, errors.New("simplextest: eigendecomposition failed")
	}
	return eig.Values(nil)[0], nil
}

// MinByEnumeration solves min wᵀUw over the simplex by brute force over
// supports: for every non-empty S it solves the KKT system
// [U_SS −1; 1ᵀ 0]·[w_S; λ] = [0; 1] with gonum's LU and keeps the
// feasible (w_S ≥ 0) answer of least objective; nil where no support has
// one. The minimiser is the solution on its own support, and every other
// feasible candidate is a point of the simplex, so the least one is the
// minimum, whatever U's conditioning. 2^K solves: for small K only.
func MinByEnumeration(u []float64, k int) []float64 {
	var best []float64
	bestVal := math.Inf(1)
	for mask := 1; mask < 1<<k; mask++ {
		var sup []int
		for i := range k {
			if mask&(1<<i) != 0 {
				sup = append(sup, i)
			}
		}
		n := len(sup) + 1
		a := mat.NewDense(n, n, nil)
		rhs := mat.NewVecDense(n, nil)
		for r, i := range sup {
			for c, j := range sup {
				a.Set(r, c, u[i*k+j])
			}
			a.Set(r, n-1, -1)
			a.Set(n-1, r, 1)
		}
		rhs.SetVec(n-1, 1)
		var x mat.VecDense
		if err := x.SolveVec(a, rhs); err != nil {
			continue // singular: this support has no unique candidate
		}
		w := make([]float64, k)
		feasible := true
		for r, i := range sup {
			w[i] = x.AtVec(r)
			feasible = feasible && w[i] >= 0
		}
		if !feasible {
			continue
		}
		if v := Objective(u, w); v < bestVal {
			best, bestVal = w, v
		}
	}
	return best
}
