// Package minnorm solves the min-norm problem on the probability simplex,
//
//	minimise wᵀUw  subject to  w ≥ 0, Σ w = 1,
//
// for a symmetric K×K matrix U that is positive semi-definite along the
// simplex (vᵀUv ≥ 0 whenever Σ v = 0): a Gram matrix, or a Gram matrix
// plus any multiple of 11ᵀ. It is the quadratic programme at the heart of
// MGDA (Désidéri 2012, Sener & Koltun 2018), MOO-SVGD and MT-SGD: when U is
// the Gram matrix of K directions, w* gives the shortest vector in their
// convex hull, a direction that improves all K objectives at once (MT-SGD's
// Lemma 1: (Uw*)_i ≥ w*ᵀUw* for every i).
//
// # Shift invariance
//
// On the simplex wᵀ(U + c11ᵀ)w = wᵀUw + c, so adding a multiple of 11ᵀ to U
// never moves the minimiser. Such a constant can dwarf the rest of U: MT-SGD's
// kernel-trace term adds the same value to every entry, and on a network it
// exceeds the gradient terms by many orders of magnitude. Solve therefore
// subtracts the smallest entry of U before anything else and works with the
// shifted matrix B = U − min_ij U_ij·11ᵀ. Every quantity it then uses (the
// step size, the duality gap, the tolerance it aims at, the KKT systems) is
// unchanged by U → U + c11ᵀ, so the answer is as accurate as the float64
// entries of U allow, however large c is. Result.Value is reported for U
// itself.
//
// # Algorithm
//
// K = 1 and K = 2 are solved in closed form. For K ≥ 3 the solver runs
// accelerated projected gradient (FISTA with gradient restart) with step
// 1/L, L a Gershgorin bound on 2λ_max(PBP), P = I − 11ᵀ/K: only the
// curvature along the simplex matters, and the doubly centred PBP keeps the
// step right even when the directions share a long common component, which a
// constant shift cannot remove. Whenever the support of the iterate
// changes, it tries to finish exactly by solving the KKT system on that
// support; that system is singular where the minimiser is not unique, so
// then, and every few dozen iterations on an unchanged support, it also
// tries a few proximal steps, which stay well-posed. Projected gradient's
// rate depends on U's conditioning along the simplex: where it leaves the
// gap above the tolerance (one direction 10⁴ times longer than the
// others is enough), an active-set method, Wolfe's algorithm for the
// nearest point of a polytope, finishes in the steps kept back for it
// (wolfe.go).
//
// # Certification
//
// The solver stops as soon as the Frank-Wolfe duality gap
// 2(wᵀUw − min_i (Uw)_i), an upper bound on f(w) − min f and itself
// shift-invariant, is at most
//
//	Tol·D + 8K·2⁻⁵³·max_ij |B_ij|,
//
// where D = max_ij (U_ii + U_jj − 2U_ij) is the largest squared distance
// between two of the directions (the squared diameter of their convex hull)
// and the second term bounds the rounding error of the computed gap. Both
// are shift-invariant. When D = 0 all directions are equal and every w is
// optimal; the solver returns the uniform w.
//
// Otherwise it runs to MaxIter iterations and keeps the point of least gap.
// That point counts as converged (Result.Converged, Result.Tol) if its gap
// is at most the tolerance above plus 8K·2⁻⁵³·max_ij |U_ij|: whatever
// computed U holds its entries only to 2⁻⁵³·|U_ij|, which moves the gap of
// any w by up to 4·2⁻⁵³·max|U|, so no smaller gap can be asked for where
// that noise is all that separates the directions (linearly dependent or
// repeated directions under a large shift). Where the minimiser is well
// determined the solver reaches the first tolerance and stops there.
//
// A solve that ends above the tolerance returns a *NotConvergedError
// naming the gap, the tolerance, K and the iterations, together with the
// best w found and its Result, so a caller can only use an uncertified
// answer on purpose. The update rules of package particles pass the error
// up rather than move particles along a direction that is not the min-norm
// one.
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

// unitRoundoff is the unit roundoff of float64, 2⁻⁵³.
const unitRoundoff = 0x1p-53

// polishEvery is how often, in iterations, the solver retries polishing on
// an unchanged support.
const polishEvery = 50

// Result describes a solution.
type Result struct {
	Value      float64 // wᵀUw at the returned w, for U as given
	Gap        float64 // Frank-Wolfe gap 2(wᵀUw − min_i (Uw)_i) ≥ wᵀUw − min over the simplex
	Tol        float64 // the absolute tolerance Converged holds Gap to (see the package doc)
	Iterations int     // projected-gradient and active-set steps (0 for closed forms)
	Converged  bool    // Gap ≤ Tol
}

// NotConvergedError is returned by Solve when the duality gap of the
// returned w is above the tolerance, in practice after MaxIter iterations:
// w is then the best iterate, not a certified minimiser.
type NotConvergedError struct {
	Gap        float64 // Frank-Wolfe gap reached
	Tol        float64 // absolute tolerance it had to reach
	K          int     // problem size
	Iterations int     // iterations run
}

func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("minnorm: not converged: duality gap %.3g above tolerance %.3g (K = %d, %d iterations)",
		e.Gap, e.Tol, e.K, e.Iterations)
}

// Solver solves min-norm problems. The zero value is ready to use; a Solver
// reuses its buffers between calls and is not safe for concurrent use.
type Solver struct {
	Tol     float64 // gap tolerance relative to D (package doc); 0 means DefaultTol
	MaxIter int     // iteration cap for K ≥ 3; 0 means DefaultMaxIter

	k                              int
	delta                          float64   // δ of the proximal polishing steps
	b                              []float64 // the shifted matrix B, K×K
	uw, y, prev, grad, sorted, kkt []float64
	best                           []float64 // the point of least gap so far
	bestGap                        float64
	support                        []int
	corral                         []bool    // the active set of wolfe
	system                         []float64 // (K+1)×(K+2) augmented KKT system
}

// ErrNotFinite is returned (wrapped) when U holds NaN or ±Inf.
var ErrNotFinite = errors.New("matrix has a non-finite entry")

// Solve writes the minimiser into w (length K) for the K×K matrix u, stored
// row-major (u[i*K+j] = U_ij). It returns an error for invalid input, and a
// *NotConvergedError (with w and the Result filled in) when the solution
// could not be certified within MaxIter iterations.
func (s *Solver) Solve(w, u []float64) (Result, error) {
	k := len(w)
	if k == 0 {
		return Result{}, errors.New("minnorm: empty problem (K = 0)")
	}
	if len(u) != k*k {
		return Result{}, fmt.Errorf("minnorm: U has %d entries, want K×K = %d", len(u), k*k)
	}
	maxAbs, shift, err := checkMatrix(u, k)
	if err != nil {
		return Result{}, err
	}
	s.resize(k)
	b := s.b
	maxB, diam := shiftInto(b, u, k, shift)
	if math.IsInf(maxB, 0) || math.IsInf(diam, 0) {
		return Result{}, fmt.Errorf("minnorm: U's entries span [%v, %v], too wide to subtract in float64", shift, maxAbs)
	}
	rel := s.Tol
	if rel == 0 {
		rel = DefaultTol
	}
	// The solver aims at a shift-invariant tolerance and, at the iteration
	// cap, accepts what the rounding of U's own entries allows (package doc).
	aim := rel*diam + 8*float64(k)*unitRoundoff*maxB
	noise := 8 * float64(k) * unitRoundoff * maxAbs
	tol := aim + noise
	// Proximal polishing regularises at least at the noise level, where
	// rounding may leave B slightly indefinite along the simplex.
	s.delta = proxWeight*diam + noise

	var iters int
	switch {
	case k == 1:
		w[0] = 1
	case diam == 0:
		// All directions coincide: every w is optimal.
		for i := range w {
			w[i] = 1 / float64(k)
		}
	case k == 2:
		solve2(w, b)
	default:
		maxIter := s.MaxIter
		if maxIter == 0 {
			maxIter = DefaultMaxIter
		}
		// Projected gradient first; the active-set method (wolfe.go)
		// finishes what it leaves uncertified, in a reserve of steps.
		reserve := min(maxIter/2, wolfeReserve(k))
		iters = s.iterate(w, b, aim, maxIter-reserve)
		if s.bestGap > aim && iters < maxIter {
			iters += s.wolfe(w, b, aim, maxIter-iters)
			copy(w, s.best)
		}
	}
	r := s.evaluate(w, b)
	r.Iterations = iters
	r.Tol = tol
	r.Converged = r.Gap <= tol
	mulVec(s.uw, u, w)
	r.Value = dot(w, s.uw)
	if !r.Converged {
		return r, &NotConvergedError{Gap: r.Gap, Tol: tol, K: k, Iterations: iters}
	}
	return r, nil
}

// checkMatrix checks that the K×K matrix u is finite and symmetric (to
// 1e-9 of its largest magnitude), and returns that magnitude and its
// smallest entry.
func checkMatrix(u []float64, k int) (maxAbs, least float64, err error) {
	least = math.Inf(1)
	for i, v := range u {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, fmt.Errorf("minnorm: U[%d][%d] = %v: %w", i/k, i%k, v, ErrNotFinite)
		}
		maxAbs = math.Max(maxAbs, math.Abs(v))
		least = math.Min(least, v)
	}
	for i := range k {
		for j := i + 1; j < k; j++ {
			if a, b := u[i*k+j], u[j*k+i]; math.Abs(a-b) > 1e-9*maxAbs {
				return 0, 0, fmt.Errorf("minnorm: U is not symmetric: U[%d][%d] = %v, U[%d][%d] = %v", i, j, a, j, i, b)
			}
		}
	}
	return maxAbs, least, nil
}

// shiftInto writes into b the symmetric part of u less shift, and returns
// b's largest magnitude and the diameter D = max_ij (B_ii + B_jj − 2B_ij).
//
// The shift is the smallest entry: an entry of U itself, so a constant U
// gives B = 0 exactly, and when a large constant dominates, U_ij − shift
// is exact (Sterbenz's lemma) and keeps all the information U holds about
// the differences between directions. B's entries lie in [0, max U − min U],
// a range U → U + c11ᵀ leaves alone. B is also the symmetric part of U,
// which is all that wᵀUw depends on.
func shiftInto(b, u []float64, k int, shift float64) (maxB, diam float64) {
	for i := range k {
		for j := i; j < k; j++ {
			v := ((u[i*k+j] - shift) + (u[j*k+i] - shift)) / 2
			b[i*k+j], b[j*k+i] = v, v
			maxB = math.Max(maxB, math.Abs(v))
		}
	}
	for i := range k {
		for j := i + 1; j < k; j++ {
			diam = math.Max(diam, b[i*k+i]+b[j*k+j]-2*b[i*k+j])
		}
	}
	return maxB, diam
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
// from the simplex centre until the gap is at most aim, for at most
// maxIter iterations, and returns the number used. It leaves in w the
// point of least gap it met, among the iterates and the polishing
// candidates.
func (s *Solver) iterate(w, u []float64, aim float64, maxIter int) int {
	step := 1 / (2 * s.curvature(u))

	for i := range w {
		w[i] = 1 / float64(len(w))
	}
	copy(s.y, w)
	s.bestGap = math.Inf(1)
	mom := 1.0
	lastSupport := -1
	for it := 1; it <= maxIter; it++ {
		// Gradient step from the extrapolated point y, then project.
		mulVec(s.grad, u, s.y)
		copy(s.prev, w)
		for i := range w {
			w[i] = s.y[i] - step*2*s.grad[i]
		}
		s.project(w)

		if s.keep(w, u, aim) {
			return it
		}
		// Polish when the support changes, and now and then on a support
		// that stays: the proximal steps start from a better w each time.
		if sup := supportMask(w); sup != lastSupport || it%polishEvery == 0 {
			exact := sup != lastSupport
			lastSupport = sup
			if s.polish(w, u, aim, exact) {
				copy(w, s.best)
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
	copy(w, s.best)
	return maxIter
}

// keep records z if its gap is the least so far, and reports whether the
// gap is at most aim.
func (s *Solver) keep(z, u []float64, aim float64) bool {
	gap := s.evaluate(z, u).Gap
	if gap < s.bestGap {
		s.bestGap = gap
		copy(s.best, z)
	}
	return gap <= aim
}

// curvature returns a Gershgorin bound on λ_max(PUP), P = I − 11ᵀ/K. Two
// points of the simplex differ by a vector v with Σ v = 0, for which
// vᵀUv = vᵀ(PUP)v, so 2λ_max(PUP) is a Lipschitz constant of the gradient
// on the simplex. PUP_ij = U_ij − r_i − r_j + m (r the row means, m their
// mean) is the Gram matrix of the directions minus their centroid, bounded
// entrywise by D, even where U's rows also differ by a large common term
// r_i + r_j that a constant shift cannot remove. Solve only calls it with
// D > 0, so U ≠ 0; should rounding make the computed PUP vanish all the
// same, the bound falls back to U's own Gershgorin bound, ≥ λ_max(PUP).
func (s *Solver) curvature(u []float64) float64 {
	k := len(s.uw)
	r := s.kkt // scratch: row means
	m := 0.0
	for i := range k {
		r[i] = 0
		for j := range k {
			r[i] += u[i*k+j]
		}
		r[i] /= float64(k)
		m += r[i]
	}
	m /= float64(k)
	centred, plain := 0.0, 0.0
	for i := range k {
		rowC, rowU := 0.0, 0.0
		for j := range k {
			rowC += math.Abs(u[i*k+j] - r[i] - r[j] + m)
			rowU += math.Abs(u[i*k+j])
		}
		centred = math.Max(centred, rowC)
		plain = math.Max(plain, rowU)
	}
	if centred == 0 {
		return plain
	}
	return centred
}

// polish tries to finish on the support S of w by solving the KKT
// conditions there, U_SS w_S = λ·1, Σ w_S = 1. It hands each answer,
// clipped to w ≥ 0 and rescaled to sum to 1, to keep, and reports whether
// one had a gap of at most aim: a wrong support, a singular or an
// inaccurate solve simply fails that certificate.
//
// With exact set it first solves the system as it stands. That is singular
// when the minimiser is not unique on S (duplicate directions, fewer
// dimensions than directions), so it then takes a few proximal steps
// z ← argmin{zᵀU_SS z + δ‖z − x‖² : Σ z = 1} from x = w, which stay
// well-posed and move w towards the nearest minimiser on S.
func (s *Solver) polish(w, u []float64, aim float64, exact bool) bool {
	sup := s.support[:0]
	for i, v := range w {
		if v > 0 {
			sup = append(sup, i)
		}
	}
	s.support = sup
	if exact && s.kktSolve(w, u, 0) && s.toSimplex() && s.keep(s.kkt, u, aim) {
		return true
	}
	copy(s.kkt, w)
	for range proxSteps {
		if !s.kktSolve(s.kkt, u, s.delta) {
			return false
		}
	}
	return s.toSimplex() && s.keep(s.kkt, u, aim)
}

// Proximal polishing: steps per attempt, and δ relative to D (Solve adds
// the noise level of U's entries). Each step shrinks the error along an
// eigenvector of U_SS with eigenvalue λ by δ/(λ+δ), while δ keeps the
// system's condition number near 1/proxWeight.
const (
	proxSteps  = 3
	proxWeight = 1e-6
)

// kktSolve solves [U_SS + δI, −1; 1ᵀ, 0]·[z_S; λ] = [δ·x_S; 1] on the
// support s.support and leaves z (zero off S) in s.kkt; x may be s.kkt. It
// reports false for a zero pivot or a non-finite answer.
func (s *Solver) kktSolve(x, u []float64, delta float64) bool {
	k := len(x)
	sup := s.support
	// Row-major, with the right-hand side as the last column.
	n := len(sup) + 1
	a := s.system[:n*(n+1)]
	for r, i := range sup {
		for c, j := range sup {
			a[r*(n+1)+c] = u[i*k+j]
		}
		a[r*(n+1)+r] += delta
		a[r*(n+1)+n-1] = -1
		a[r*(n+1)+n] = delta * x[i]
		a[(n-1)*(n+1)+r] = 1
	}
	a[(n-1)*(n+1)+n-1] = 0
	a[(n-1)*(n+1)+n] = 1
	if !solveInPlace(a, n) {
		return false
	}
	z := s.kkt
	clear(z)
	for r, i := range sup {
		z[i] = a[r*(n+1)+n]
		if math.IsNaN(z[i]) || math.IsInf(z[i], 0) {
			return false
		}
	}
	return true
}

// toSimplex clips s.kkt to w ≥ 0 and rescales it to sum to 1, reporting
// false if nothing positive is left. The gap certifies only points of the
// simplex: with U shifted, a point off it can show a spurious zero gap.
func (s *Solver) toSimplex() bool {
	z := s.kkt
	sum := 0.0
	for i, v := range z {
		z[i] = math.Max(0, v)
		sum += z[i]
	}
	if !(sum > 0) {
		return false
	}
	for i := range z {
		z[i] /= sum
	}
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
	if top := srt[len(srt)-1]; !(top-theta > 0) {
		// v is so large that v − θ rounds to 0 everywhere: the largest
		// entries share the weight.
		n := 0
		for _, x := range v {
			if x == top {
				n++
			}
		}
		for i, x := range v {
			v[i] = 0
			if x == top {
				v[i] = 1 / float64(n)
			}
		}
		return
	}
	sum := 0.0
	for i := range v {
		v[i] = math.Max(0, v[i]-theta)
		sum += v[i]
	}
	// When v is large, v − θ keeps only the rounding of θ in its sum; the
	// gap certifies only points whose weights sum to 1.
	for i := range v {
		v[i] /= sum
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
	s.best = make([]float64, k)
	s.b = make([]float64, k*k)
	s.support = make([]int, 0, k)
	s.corral = make([]bool, k)
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
