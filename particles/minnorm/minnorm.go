// Package minnorm solves the min-norm problem on the probability simplex,
//
//	minimise wᵀUw  subject to  w ≥ 0, Σ w = 1,
//
// for a symmetric positive semi-definite K×K matrix U. It is the quadratic
// programme at the heart of MGDA (Désidéri 2012, Sener & Koltun 2018),
// MOO-SVGD and MT-SGD: when U is the Gram matrix of K directions, w* gives
// the shortest vector in their convex hull, a direction that improves all K
// objectives at once (MT-SGD's Lemma 1: (Uw*)_i ≥ w*ᵀUw* for every i).
//
// K = 1 and K = 2 are solved in closed form. For K ≥ 3 the solver runs
// accelerated projected gradient (FISTA with gradient restart, step 1/L with L
// a Gershgorin bound on 2λ_max(U)) and, whenever the support of the iterate
// changes, tries to finish exactly by solving the KKT system on that support.
// It stops when the Frank-Wolfe duality gap, an upper bound on
// f(w) − f(w*), falls below Tol·max_i U_ii, or after MaxIter iterations; it
// never loops forever and always reports the gap it reached.
package minnorm

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Default solver settings, used where a Solver field is zero.
const (
	DefaultTol     = 1e-10
	DefaultMaxIter = 20000
)

// Result describes a solution.
type Result struct {
	Value      float64 // wᵀUw at the returned w
	Gap        float64 // Frank-Wolfe gap 2(wᵀUw − min_i (Uw)_i) ≥ wᵀUw − min over the simplex
	Iterations int     // projected-gradient iterations (0 for closed forms)
	Converged  bool    // Gap ≤ Tol·max_i U_ii
}

// Solver solves min-norm problems. The zero value is ready to use; a Solver
// reuses its buffers between calls and is not safe for concurrent use.
type Solver struct {
	Tol     float64 // relative gap tolerance; 0 means DefaultTol
	MaxIter int     // iteration cap for K ≥ 3; 0 means DefaultMaxIter

	k                              int
	uw, y, prev, grad, sorted, kkt []float64
	support                        []int
	system                         []float64 // (K+1)×(K+2) augmented KKT system
}

// ErrNotFinite is returned (wrapped) when U holds NaN or ±Inf.
var ErrNotFinite = errors.New("matrix has a non-finite entry")

// Solve writes the minimiser into w (length K) for the K×K matrix u, stored
// row-major (u[i*K+j] = U_ij).
func (s *Solver) Solve(w, u []float64) (Result, error) {
	k := len(w)
	if k == 0 {
		return Result{}, errors.New("minnorm: empty problem (K = 0)")
	}
	if len(u) != k*k {
		return Result{}, fmt.Errorf("minnorm: U has %d entries, want K×K = %d", len(u), k*k)
	}
	scale := 0.0
	maxAbs := 0.0
	for i, v := range u {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Result{}, fmt.Errorf("minnorm: U[%d][%d] = %v: %w", i/k, i%k, v, ErrNotFinite)
		}
		maxAbs = math.Max(maxAbs, math.Abs(v))
		if i/k == i%k {
			scale = math.Max(scale, v)
		}
	}
	for i := range k {
		for j := i + 1; j < k; j++ {
			if a, b := u[i*k+j], u[j*k+i]; math.Abs(a-b) > 1e-9*maxAbs {
				return Result{}, fmt.Errorf("minnorm: U is not symmetric: U[%d][%d] = %v, U[%d][%d] = %v", i, j, a, j, i, b)
			}
		}
	}
	s.resize(k)
	tol := s.Tol
	if tol == 0 {
		tol = DefaultTol
	}
	tol *= scale

	switch {
	case scale == 0:
		// With a zero diagonal a PSD U is zero: every w is optimal.
		for i := range w {
			w[i] = 1 / float64(k)
		}
	case k == 1:
		w[0] = 1
	case k == 2:
		solve2(w, u)
	default:
		iters := s.iterate(w, u, tol)
		r := s.evaluate(w, u)
		r.Iterations = iters
		r.Converged = r.Gap <= tol
		return r, nil
	}
	r := s.evaluate(w, u)
	r.Converged = r.Gap <= tol
	return r, nil
}

// solve2 is the closed form for K = 2: with w = (t, 1−t),
// f(t) = t²U11 + 2t(1−t)U12 + (1−t)²U22 has its minimum at
// t = (U22 − U12)/(U11 + U22 − 2U12), clipped to [0, 1].
func solve2(w, u []float64) {
	u11, u12, u22 := u[0], u[1], u[3]
	den := u11 + u22 - 2*u12 // ‖φ1 − φ2‖² ≥ 0
	var t float64
	switch {
	case den > 0:
		t = math.Min(1, math.Max(0, (u22-u12)/den))
	case u11 < u22: // f is linear in t: take the cheaper end
		t = 1
	case u11 > u22:
		t = 0
	default:
		t = 0.5
	}
	w[0], w[1] = t, 1-t
}

// evaluate fills in the objective and the Frank-Wolfe gap at w.
func (s *Solver) evaluate(w, u []float64) Result {
	mulVec(s.uw, u, w)
	val := dot(w, s.uw)
	return Result{Value: val, Gap: math.Max(0, 2*(val-slices.Min(s.uw)))}
}

// iterate runs FISTA with gradient-based restart (O'Donoghue & Candès 2015)
// from the simplex centre and returns the number of iterations used.
func (s *Solver) iterate(w, u []float64, tol float64) int {
	k := len(w)
	lip := 0.0 // Gershgorin: λ_max(U) ≤ max_i Σ_j |U_ij|
	for i := range k {
		row := 0.0
		for j := range k {
			row += math.Abs(u[i*k+j])
		}
		lip = math.Max(lip, row)
	}
	step := 1 / (2 * lip)

	for i := range w {
		w[i] = 1 / float64(k)
	}
	copy(s.y, w)
	mom := 1.0
	maxIter := s.MaxIter
	if maxIter == 0 {
		maxIter = DefaultMaxIter
	}
	lastSupport := -1
	for it := 1; it <= maxIter; it++ {
		// Gradient step from the extrapolated point y, then project.
		mulVec(s.grad, u, s.y)
		copy(s.prev, w)
		for i := range w {
			w[i] = s.y[i] - step*2*s.grad[i]
		}
		s.project(w)

		if r := s.evaluate(w, u); r.Gap <= tol {
			return it
		}
		if sup := supportMask(w); sup != lastSupport {
			lastSupport = sup
			if s.polish(w, u, tol) {
				return it
			}
		}

		// Restart the momentum when it points uphill.
		uphill := 0.0
		for i := range w {
			uphill += s.grad[i] * (w[i] - s.prev[i])
		}
		next := (1 + math.Sqrt(1+4*mom*mom)) / 2
		beta := (mom - 1) / next
		mom = next
		if uphill > 0 {
			mom, beta = 1, 0
		}
		for i := range w {
			s.y[i] = w[i] + beta*(w[i]-s.prev[i])
		}
	}
	return maxIter
}

// polish solves the KKT conditions on the support S of w exactly:
// U_SS w_S = λ·1, Σ w_S = 1. It replaces w only if the answer is feasible and
// certified optimal (gap ≤ tol), and reports whether it did; a singular or
// inaccurate solve simply fails the certificate.
func (s *Solver) polish(w, u []float64, tol float64) bool {
	k := len(w)
	sup := s.support[:0]
	for i, v := range w {
		if v > 0 {
			sup = append(sup, i)
		}
	}
	// The bordered system [U_SS −1; 1ᵀ 0]·[w_S; λ] = [0; 1], row-major with
	// the right-hand side as the last column.
	n := len(sup) + 1
	a := s.system[:n*(n+1)]
	for r, i := range sup {
		for c, j := range sup {
			a[r*(n+1)+c] = u[i*k+j]
		}
		a[r*(n+1)+n-1] = -1
		a[r*(n+1)+n] = 0
		a[(n-1)*(n+1)+r] = 1
	}
	a[(n-1)*(n+1)+n-1] = 0
	a[(n-1)*(n+1)+n] = 1
	if !solveInPlace(a, n) {
		return false
	}
	cand := s.kkt
	for i := range cand {
		cand[i] = 0
	}
	for r, i := range sup {
		x := a[r*(n+1)+n]
		if !(x >= 0) {
			return false
		}
		cand[i] = x
	}
	if r := s.evaluate(cand, u); r.Gap > tol {
		return false
	}
	copy(w, cand)
	return true
}

// solveInPlace solves the n×n system whose augmented matrix [A | b] is a
// (row-major, n+1 columns) by Gaussian elimination with partial pivoting,
// leaving x in the last column. It reports false for a zero pivot.
func solveInPlace(a []float64, n int) bool {
	c := n + 1
	for col := range n {
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r*c+col]) > math.Abs(a[p*c+col]) {
				p = r
			}
		}
		if a[p*c+col] == 0 {
			return false
		}
		if p != col {
			for j := range c {
				a[p*c+j], a[col*c+j] = a[col*c+j], a[p*c+j]
			}
		}
		for r := range n {
			if r == col {
				continue
			}
			f := a[r*c+col] / a[col*c+col]
			for j := col; j < c; j++ {
				a[r*c+j] -= f * a[col*c+j]
			}
		}
	}
	for r := range n {
		a[r*c+n] /= a[r*c+r]
	}
	return true
}

// project replaces v by its Euclidean projection onto the simplex
// (the sort-based algorithm of Held, Wolfe & Crowder 1974; Duchi et al. 2008).
func (s *Solver) project(v []float64) {
	srt := s.sorted
	copy(srt, v)
	slices.Sort(srt)
	cum, theta := 0.0, 0.0
	for i := len(srt) - 1; i >= 0; i-- {
		cum += srt[i]
		t := (cum - 1) / float64(len(srt)-i)
		if i == 0 || t >= srt[i-1] {
			theta = t
			break
		}
	}
	for i := range v {
		v[i] = math.Max(0, v[i]-theta)
	}
}

func (s *Solver) resize(k int) {
	if s.k == k {
		return
	}
	s.k = k
	s.uw = make([]float64, k)
	s.y = make([]float64, k)
	s.prev = make([]float64, k)
	s.grad = make([]float64, k)
	s.sorted = make([]float64, k)
	s.kkt = make([]float64, k)
	s.support = make([]int, 0, k)
	s.system = make([]float64, (k+1)*(k+2))
}

// supportMask encodes which of the first 63 weights are positive; it only
// needs to change when the support does.
func supportMask(w []float64) int {
	m := 0
	for i, v := range w {
		if v > 0 {
			m ^= 1 << (i % 63)
		}
	}
	return m
}

func mulVec(dst, u, w []float64) {
	k := len(w)
	for i := range k {
		dst[i] = dot(u[i*k:(i+1)*k], w)
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
