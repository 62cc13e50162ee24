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
