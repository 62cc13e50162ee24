package aggregate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// float64Eps is the machine epsilon of float64, 2⁻⁵², the spacing of the
// numbers next to 1.
const float64Eps = 0x1p-52

// checkGradients checks that g holds K ≥ 1 rows of one length d ≥ 1,
// that dst has length d and that every entry is finite, and returns K
// and d. method names the caller in the error.
func checkGradients(method string, dst []float64, g [][]float64) (k, d int, err error) {
	k = len(g)
	if k == 0 {
		return 0, 0, fmt.Errorf("%s: no task gradients", method)
	}
	d = len(dst)
	if d == 0 {
		return 0, 0, fmt.Errorf("%s: empty destination", method)
	}
	for i, row := range g {
		if len(row) != d {
			return 0, 0, fmt.Errorf("%s: gradient of task %d has length %d, want %d (the destination's)", method, i, len(row), d)
		}
	}
	for i, row := range g {
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("%s: gradient of task %d has %v at %d", method, i, v, j)
			}
		}
	}
	return k, d, nil
}

// gramInto writes the K×K Gram matrix M = GGᵀ, M_ij = g_i·g_j, into m
// (row-major, reused when it has length K², else allocated) and returns it.
func gramInto(m []float64, g [][]float64) []float64 {
	k := len(g)
	if len(m) != k*k {
		m = make([]float64, k*k)
	}
	for i := range k {
		for j := i; j < k; j++ {
			v := dotProduct(g[i], g[j])
			m[i*k+j], m[j*k+i] = v, v
		}
	}
	return m
}

// combineRows writes Σ_k w_k g_k into dst.
func combineRows(dst, w []float64, g [][]float64) {
	clear(dst)
	for k, wk := range w {
		if wk == 0 {
			continue
		}
		for x, v := range g[k] {
			dst[x] += wk * v
		}
	}
}

// dotProduct returns a·b for slices of one length.
func dotProduct(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// largestDiagonal returns max_i M_ii of the K×K matrix m: the largest
// squared gradient norm, the scale the weight problems are solved at.
func largestDiagonal(m []float64, k int) float64 {
	s := 0.0
	for i := range k {
		s = math.Max(s, m[i*k+i])
	}
	return s
}

// growFloats returns buf resized to n, reallocating only when it is short.
func growFloats(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// isConditionError reports whether err is gonum's warning that a solved
// system is ill-conditioned.
func isConditionError(err error) bool {
	var c mat.Condition
	return errors.As(err, &c)
}
