package aggregate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// DefaultCAGradC is CAGrad's default c, the value of the paper's
// experiments on NYUv2 and CityScapes and of LibMTL.
const DefaultCAGradC = 0.4

// CAGrad is conflict-averse gradient descent (Liu et al., "Conflict-Averse
// Gradient Descent for Multi-task Learning", NeurIPS 2021, Algorithm 1).
// With g₀ the mean of the task gradients and φ = c²‖g₀‖², it finds the
// weights
//
//	w* = argmin over the simplex of  g_wᵀg₀ + √φ‖g_w‖,   g_w = Σᵢ wᵢgᵢ,
//
// (the dual of maximising the worst task's improvement within the ball
// of radius c‖g₀‖ around g₀) and returns
//
//	d = g₀ + (√φ/‖g_w*‖) g_w*.
//
// Scale: d is the paper's, on the scale of the mean gradient, with no
// further division: LibMTL divides it by 1 + c² (its rescale option) and
// the authors' code multiplies the update by K. With c = 0 it is the
// mean gradient; where g₀ = 0 (φ = 0) it is 0.
//
// The weight problem is solved on the K×K Gram matrix, scaled to unit
// largest diagonal, by a primal barrier method (Newton on
// F(w) − μΣlog wᵢ on the simplex, μ decreasing to 1e-15), and certified
// by the Frank-Wolfe duality gap ∇F(w)ᵀw − minᵢ ∇F(w)ᵢ ≥ F(w) − F(w*):
// Aggregate returns an error if the gap is above 1e-11 (relative to the
// largest squared gradient norm). Two tasks are solved exactly instead,
// by bisection on the sign of the one-dimensional slope (pairWeight). With
// three or more, where two gradients are nearly opposite and another lies
// in their plane, the barrier can stall short of the certificate; the
// edge of its two largest weights is then solved so and certified there
// where it holds the minimiser (polishPair). What remains fails, and
// Aggregate returns the error: 1 of TestDegenerateSetsEnd's 600 planar
// sets at c = 0.4 and 20 at c = 2, and 4 and 63 of
// TestNearlyDependentSets' 1,500. Where the minimiser has g_w* = 0 (0 in
// the convex hull of the gradients and c large enough that no
// combination beats it, possible for any c > 0 with K ≥ 3: a
// Pareto-stationary point, which training reaches) the direction
// g_w*/‖g_w*‖ is undefined, and d is the mean gradient g₀: the limit of
// LibMTL's regularised form g₀ + c‖g₀‖·g_w/(‖g_w‖ + ε) as g_w → 0. It
// is so when ‖g_w*‖ ≤ 10⁻⁶ maxᵢ‖gᵢ‖, or when the solver meets such a
// vanishing combination on its way.
//
// Sign: the gradients are loss gradients and d is a descent direction
// for θ ← θ − lr·d; negating G leaves the Gram matrix and w* unchanged
// and negates d.
//
// The zero value uses c = 0.4. CAGrad computes on the host (on a GPU
// host, from the gradients copied there), in O(K²d) operations for the
// Gram matrix and O(K³) per Newton step.
type CAGrad struct {
	// C is c ≥ 0, the radius of the ball around the mean gradient
	// relative to its norm; 0 means DefaultCAGradC. Set a negative
	// value for c = 0 (the mean gradient).
	C float64

	gram, w, g0, gw []float64
	barrier         caGradBarrier
}

// c returns the c in use.
func (a *CAGrad) c() float64 {
	switch {
	case a.C == 0:
		return DefaultCAGradC
	case a.C < 0:
		return 0
	}
	return a.C
}

// Aggregate implements Aggregator.
func (a *CAGrad) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, d, err := checkGradients("cagrad", dst, g)
	if err != nil {
		return err
	}
	c := a.c()
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return fmt.Errorf("cagrad: c is %v", c)
	}
	a.g0 = growFloats(a.g0, d)
	a.w = growFloats(a.w, k)
	for i := range a.w {
		a.w[i] = 1 / float64(k)
	}
	combineRows(a.g0, a.w, g)
	g0norm := math.Sqrt(dotProduct(a.g0, a.g0))
	if c == 0 || g0norm == 0 {
		copy(dst, a.g0)
		return nil
	}
	a.gram = gramInto(a.gram, g)
	err = a.barrier.solve(a.w, a.gram, k, c)
	if errors.Is(err, errVanished) {
		copy(dst, a.g0)
		return nil
	}
	if err != nil {
		return fmt.Errorf("cagrad: %w", err)
	}
	a.gw = growFloats(a.gw, d)
	combineRows(a.gw, a.w, g)
	gwNorm := math.Sqrt(dotProduct(a.gw, a.gw))
	if gwNorm <= 1e-6*math.Sqrt(largestDiagonal(a.gram, k)) {
		copy(dst, a.g0) // g_w* = 0: the direction is undefined
		return nil
	}
	f := c * g0norm / gwNorm
	for x := range dst {
		dst[x] = a.g0[x] + f*a.gw[x]
	}
	return nil
}

// errVanished is the weight problem's answer when the minimising
// combination of the gradients is 0 (or the solver cannot tell it from
// 0 in floating point: the barrier's Hessian, positive semi-definite,
// has entries that grow like 1/‖g_w‖ and their rounding with them).
var errVanished = errors.New("cagrad: the minimising combination of the gradients vanished")

// caGradBarrier solves CAGrad's weight problem
//
//	minimise F(w) = bᵀw + r√(wᵀMw)  over the simplex,
//
// b = M1/K, r = c√(1ᵀM1)/K, on M scaled to unit largest diagonal.
type caGradBarrier struct {
	m, b, grad, step, trial, x []float64
	hess                       *mat.SymDense
	chol                       mat.Cholesky
}

// Settings of the barrier method, for the problem scaled to unit largest
// squared gradient norm (so that F is of order 1).
const (
	caGradMuFinal = 1e-15 // last barrier weight: the central path's gap is ≤ Kμ
	caGradGapTol  = 1e-11 // Frank-Wolfe gap certified
	caGradMaxIter = 400   // Newton steps in all
)

// solve writes w* into w (length K, holding the starting point, the
// uniform weights) for the K×K Gram matrix gram and c > 0.
func (p *caGradBarrier) solve(w, gram []float64, k int, c float64) error {
	scale := largestDiagonal(gram, k)
	p.m = growFloats(p.m, k*k)
	for i, v := range gram {
		p.m[i] = v / scale
	}
	p.b = growFloats(p.b, k)
	sum := 0.0
	for i := range k {
		p.b[i] = 0
		for j := range k {
			p.b[i] += p.m[i*k+j] / float64(k)
		}
		sum += p.b[i]
	}
	r := c * math.Sqrt(math.Max(sum/float64(k), 0)) // c‖g₀‖ on the scaled problem
	p.grad = growFloats(p.grad, k)
	p.step = growFloats(p.step, k)
	p.trial = growFloats(p.trial, k)
	p.x = growFloats(p.x, k)
	if p.hess == nil || p.hess.SymmetricDim() != k {
		p.hess = mat.NewSymDense(k, nil)
	}
	if k == 2 {
		t := p.pairWeight(0, 1, 2, r)
		w[0], w[1] = t, 1-t
		return nil
	}
	mu := 1.0
	for range caGradMaxIter {
		fw, ok := p.gradient(w, r, k)
		if !ok {
			return errVanished
		}
		final := mu <= caGradMuFinal
		if final && fw <= caGradGapTol {
			return nil
		}
		decrement, err := p.newton(w, r, mu, k)
		if err != nil {
			return err
		}
		if !final && decrement <= 1e-3*mu { // centred enough: move along the path
			mu = math.Max(mu/10, caGradMuFinal)
			continue
		}
		if !p.lineSearch(w, r, mu, k) {
			if final {
				break // no further decrease in floating point
			}
			mu = math.Max(mu/10, caGradMuFinal)
		}
	}
	fw, _ := p.gradient(w, r, k)
	if fw <= caGradGapTol || p.polishPair(w, r, k) {
		return nil
	}
	return fmt.Errorf("weights not certified: Frank-Wolfe gap %.3g above %.3g after %d Newton steps", fw, caGradGapTol, caGradMaxIter)
}

// objective returns F(w) − μΣlog wᵢ, +Inf outside the domain.
func (p *caGradBarrier) objective(w []float64, r, mu float64, k int) float64 {
	lin, quad, logs := 0.0, 0.0, 0.0
	for i := range k {
		if !(w[i] > 0) {
			return math.Inf(1)
		}
		lin += p.b[i] * w[i]
		quad += w[i] * dotProduct(p.m[i*k:(i+1)*k], w)
		logs += math.Log(w[i])
	}
	if !(quad > 0) {
		return math.Inf(1)
	}
	return lin + r*math.Sqrt(quad) - mu*logs
}

// gradient writes ∇F(w) = b + r·Mw/‖g_w‖ into p.grad and returns the
// Frank-Wolfe gap ∇F(w)ᵀw − minᵢ ∇F(w)ᵢ; ok is false where g_w = 0.
func (p *caGradBarrier) gradient(w []float64, r float64, k int) (gap float64, ok bool) {
	quad := 0.0
	for i := range k {
		p.trial[i] = dotProduct(p.m[i*k:(i+1)*k], w) // (Mw)ᵢ
		quad += w[i] * p.trial[i]
	}
	if !(quad > 0) {
		return 0, false
	}
	n := math.Sqrt(quad)
	least := math.Inf(1)
	gap = 0
	for i := range k {
		p.grad[i] = p.b[i] + r*p.trial[i]/n
		gap += w[i] * p.grad[i]
		least = math.Min(least, p.grad[i])
	}
	return gap - least, true
}

// newton computes the Newton step of F − μΣlog wᵢ on the plane Σwᵢ = 1
// into p.step, and returns the Newton decrement squared. It expects
// p.grad and p.trial (= Mw) from gradient.
//
// The system is solved in the variables y = W⁻¹Δ, W = diag(w): the
// scaled Hessian WHW = W∇²FW + μI is bounded whichever weights go to 0,
// where H itself mixes entries of order μ/wᵢ² ~ 1/μ (weights leaving
// the support) with entries of order 1. ‖g_w‖ is homogeneous of degree 1
// in w, so ∇²F·w = 0 and WHW has the eigenvalue μ along the vector 1,
// which the constraint wᵀy = 0 (Σ Δᵢ = 0) excludes; adding wwᵀ removes
// it from the matrix without changing the constrained step (wᵀy = 0 on
// the plane), so that solving with it loses nothing to cancellation.
func (p *caGradBarrier) newton(w []float64, r, mu float64, k int) (float64, error) {
	// ∇²F = (r/n)(M − (Mw)(Mw)ᵀ/n²), n = ‖g_w‖.
	quad := dotProduct(w, p.trial)
	n := math.Sqrt(quad)
	for i := range k {
		for j := i; j < k; j++ {
			h := r / n * (p.m[i*k+j] - p.trial[i]*p.trial[j]/quad) * w[i] * w[j]
			h += w[i] * w[j]
			if i == j {
				h += mu
			}
			p.hess.SetSym(i, j, h)
		}
	}
	if !p.chol.Factorize(p.hess) {
		// ∇²F is positive semi-definite, but its entries grow like 1/n
		// and their rounding with them: only a vanishing combination
		// makes the factorisation fail.
		return 0, errVanished
	}
	// y = −A⁻¹(W∇Φ + νw), A = WHW + wwᵀ, ν chosen so that wᵀy = Σ Δᵢ = 0.
	grad := mat.NewVecDense(k, nil)
	wv := mat.NewVecDense(k, nil)
	for i := range k {
		grad.SetVec(i, w[i]*p.grad[i]-mu)
		wv.SetVec(i, w[i])
	}
	var hg, hw mat.VecDense
	// A mat.Condition error only warns that the system is ill-conditioned;
	// the Cholesky solve is backward stable and the step is still a
	// descent direction, which the line search checks.
	if err := p.chol.SolveVecTo(&hg, grad); err != nil && !isConditionError(err) {
		return 0, fmt.Errorf("the barrier's Newton system: %w", err)
	}
	if err := p.chol.SolveVecTo(&hw, wv); err != nil && !isConditionError(err) {
		return 0, fmt.Errorf("the barrier's Newton system: %w", err)
	}
	nu := -mat.Dot(wv, &hg) / mat.Dot(wv, &hw)
	decrement := 0.0
	for i := range k {
		y := -(hg.AtVec(i) + nu*hw.AtVec(i))
		p.step[i] = w[i] * y
		decrement -= y * grad.AtVec(i)
	}
	return decrement, nil
}

// lineSearch moves w along p.step by backtracking to sufficient decrease
// of the barrier objective, staying inside the simplex; it reports
// whether w moved.
func (p *caGradBarrier) lineSearch(w []float64, r, mu float64, k int) bool {
	t := 1.0
	for i := range k {
		if p.step[i] < 0 {
			t = math.Min(t, -0.99*w[i]/p.step[i])
		}
	}
	slope := 0.0
	for i := range k {
		slope += p.step[i] * (p.grad[i] - mu/w[i])
	}
	f0 := p.objective(w, r, mu, k)
	x := p.x
	for range 60 {
		for i := range k {
			x[i] = w[i] + t*p.step[i]
		}
		if f := p.objective(x, r, mu, k); f <= f0+0.25*t*slope {
			sum := 0.0
			for _, v := range x {
				sum += v
			}
			moved := false
			for i, v := range x {
				moved = moved || w[i] != v/sum
				w[i] = v / sum // hold Σwᵢ = 1 against rounding
			}
			// A step that rounds back to w is no step: the caller then
			// moves along the path (or stops at its end) rather than
			// repeat it.
			return moved
		}
		t /= 2
	}
	return false
}

// pairWeight returns the minimiser t* of F on the edge of the simplex
// between tasks i and j, w = t·eᵢ + (1 − t)·eⱼ (k tasks in all): there
// F is the one-dimensional convex
//
//	f(t) = bⱼ + (bᵢ − bⱼ)t + r√q(t),  q(t) = ‖t·gᵢ + (1 − t)·gⱼ‖²,
//
// whose slope f′ is non-decreasing. An end is the minimiser where f′
// does not change sign across [0, 1]; otherwise bisection on the sign of
// f′ brackets t* between two adjacent floating-point numbers, which
// certifies it (where the barrier's Frank-Wolfe gap cannot be resolved:
// with gᵢ and gⱼ nearly opposite, f″ grows like 1/√q and one ulp of t
// moves f′ by more than the gap's tolerance). Where q vanishes at t* (f′
// jumps there) Aggregate's check finds g_w* = 0.
func (p *caGradBarrier) pairWeight(i, j, k int, r float64) float64 {
	mii, mij, mjj := p.m[i*k+i], p.m[i*k+j], p.m[j*k+j]
	db := p.b[i] - p.b[j]
	slope := func(t float64) float64 {
		q := t*t*mii + 2*t*(1-t)*mij + (1-t)*(1-t)*mjj
		dq := 2*t*mii + 2*(1-2*t)*mij - 2*(1-t)*mjj
		if !(q > 0) {
			// A vanishing combination, where the slope jumps by 2r√A
			// around bᵢ − bⱼ: that midpoint puts t* on the right side
			// of it, or on it where the jump crosses 0.
			return db
		}
		return db + r*dq/(2*math.Sqrt(q))
	}
	lo, hi := 0.0, 1.0
	switch {
	case slope(0) >= 0:
		hi = 0
	case slope(1) <= 0:
		lo = 1
	default:
		for range 200 {
			mid := lo + (hi-lo)/2
			if mid <= lo || mid >= hi {
				break // adjacent: t* is bracketed to an ulp
			}
			if slope(mid) <= 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	return lo + (hi-lo)/2
}

// polishPair finishes a barrier solve that stalled: on the edge of the
// simplex between its two largest weights it takes the minimiser
// (pairWeight), which is the problem's where no other vertex improves on
// it, every other task's ∇Fₗ at least ∇F(w)ᵀw less caGradGapTol. It
// reports whether w (then set to it) is so certified; the guess of the
// edge costs nothing where it is wrong, the certificate failing.
func (p *caGradBarrier) polishPair(w []float64, r float64, k int) bool {
	i, j := 0, 1 // the largest weight, the second
	if w[j] > w[i] {
		i, j = j, i
	}
	for l := 2; l < k; l++ {
		switch {
		case w[l] > w[i]:
			i, j = l, i
		case w[l] > w[j]:
			j = l
		}
	}
	trial := make([]float64, k)
	t := p.pairWeight(i, j, k, r)
	trial[i], trial[j] = t, 1-t
	if _, ok := p.gradient(trial, r, k); !ok {
		return false
	}
	along := dotProduct(p.grad, trial)
	for l := range k {
		if l != i && l != j && p.grad[l] < along-caGradGapTol {
			return false
		}
	}
	copy(w, trial)
	return true
}
