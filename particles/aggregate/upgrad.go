package aggregate

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// UPGrad is unconflicting projection of gradients (Quinton & Rey,
// "Jacobian Descent for Multi-Objective Optimization", arXiv:2406.16232;
// the torchjd library): each task's gradient is projected onto
// the dual cone of the gradients, C = {y : gⱼ·y ≥ 0 for every j}, the
// directions that conflict with no task, and the projections are
// averaged,
//
//	d = (1/K) Σᵢ π_C(gᵢ).
//
// So d·gⱼ ≥ 0 for every task (C is convex), and d is the mean gradient
// when no two gradients conflict. The projection is computed through its
// dual: π_C(x) = x + Gᵀλ with
//
//	λ = argmin over λ ≥ 0 of ½λᵀ(GGᵀ)λ + (Gx)ᵀλ,
//
// a non-negative quadratic programme in K variables on the Gram matrix
// (for x = gᵢ, Gx is the Gram matrix's column i). It is solved exactly
// by the active-set method of Lawson & Hanson (Solving Least Squares
// Problems, 1974, ch. 23) on the Gram matrix scaled to unit largest
// diagonal, and certified by its optimality conditions: λ ≥ 0,
// μ = GGᵀλ + Gx ≥ 0 and μⱼ = 0 where λⱼ > 0, each to 1e-12 relative to
// the magnitude of the terms summed into μⱼ (for a μⱼ with λⱼ = 0, also
// of the passive residuals it inherits: see certify, which lets nearly
// opposite gradients through with directions accurate to about 1e-6 of
// the gradients' norm, and directions that conflict with a task by a
// cosine of at most 1e-8 where the cone is too thin for the active set
// to resolve); Aggregate returns an error if the certificate fails,
// which on nearly dependent sets (a gradient within 10⁻¹⁰ to 10⁻² of a
// combination of the others) happens rarely: 1 of 1,500 random ones in
// TestNearlyDependentSets. Then d = Gᵀw with w = (1/K) Σᵢ (eᵢ + λ⁽ⁱ⁾).
//
// torchjd and LibMTL add 1e-4·I to the (normalised) Gram matrix before
// solving, and fall back to the mean gradient when the gradients are
// tiny. Here there is no regulariser, so the projections are the
// exact ones, and no fallback is needed: a zero gradient projects to 0
// and adds no constraint (0·y ≥ 0), and when every gradient is zero
// d = 0.
//
// Scale: the mean of the projections, as in torchjd (weights 1/K). Sign:
// the gradients are loss gradients and d is a descent direction for
// θ ← θ − lr·d; negating G negates the cone and the projections
// (π_{−C}(−x) = −π_C(x)), so d is negated.
//
// UPGrad has no parameters: its zero value is ready to use. It computes
// on the host (on a GPU host, from the gradients copied there), in
// O(K²d) operations for the Gram matrix and K small active-set solves.
type UPGrad struct {
	gram, m, w, q []float64
	qp            nonNegativeQP
}

// Aggregate implements Aggregator.
func (a *UPGrad) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, _, err := checkGradients("upgrad", dst, g)
	if err != nil {
		return err
	}
	a.gram = gramInto(a.gram, g)
	a.w = growFloats(a.w, k)
	if err := a.weights(a.w, k); err != nil {
		return fmt.Errorf("upgrad: %w", err)
	}
	combineRows(dst, a.w, g)
	return nil
}

// weights writes w = (1/K) Σᵢ (eᵢ + λ⁽ⁱ⁾) for the Gram matrix in a.gram;
// w = 0 when every gradient is zero.
func (a *UPGrad) weights(w []float64, k int) error {
	clear(w)
	scale := largestDiagonal(a.gram, k)
	if scale == 0 {
		return nil
	}
	a.m = growFloats(a.m, k*k)
	for i, v := range a.gram {
		a.m[i] = v / scale
	}
	a.q = growFloats(a.q, k)
	for i := range k {
		copy(a.q, a.m[i*k:(i+1)*k]) // G·gᵢ, scaled
		lambda, err := a.qp.solve(a.m, a.q, a.m[i*k+i], k)
		if err != nil {
			return fmt.Errorf("projecting the gradient of task %d: %w", i, err)
		}
		for j, l := range lambda {
			w[j] += l / float64(k)
		}
		w[i] += 1 / float64(k)
	}
	return nil
}

// nonNegativeQP solves min ½λᵀAλ + qᵀλ over λ ≥ 0 for a positive
// semi-definite K×K A by Lawson and Hanson's active-set method in its
// Gram-matrix form (A = GGᵀ, q = Gx: the least-squares problem
// min ‖x + Gᵀλ‖² over λ ≥ 0).
type nonNegativeQP struct {
	lambda, z, mu []float64
	passive       []bool
	skip          []bool // indices whose entering failed numerically
	idx           []int
}

// nnqpTol is the relative tolerance of the optimality conditions, and
// nnqpAngle the cosine by which a projection may conflict with a task
// whose constraint the active set could not resolve (see certify).
const (
	nnqpTol   = 1e-12
	nnqpAngle = 1e-8
)

// solve returns the minimiser (valid until the next call).
func (p *nonNegativeQP) solve(a, q []float64, xx float64, k int) ([]float64, error) {
	p.lambda = growFloats(p.lambda, k)
	p.z = growFloats(p.z, k)
	p.mu = growFloats(p.mu, k)
	if len(p.passive) != k {
		p.passive, p.skip = make([]bool, k), make([]bool, k)
	}
	clear(p.lambda)
	clear(p.passive)
	clear(p.skip)
	for range 3*k + 10 {
		p.gradient(a, q, k)
		enter, most := -1, 0.0
		for j := range k {
			if p.passive[j] || p.skip[j] {
				continue
			}
			if v := p.mu[j]; v < -nnqpTol*p.termScale(a, q, k, j) && v < most {
				enter, most = j, v
			}
		}
		if enter < 0 {
			break
		}
		p.passive[enter] = true
		for {
			if !p.solvePassive(a, q, k) {
				// A_PP is numerically singular: the entering column
				// depends on the passive ones. Leave it out this round.
				p.passive[enter] = false
				p.skip[enter] = true
				break
			}
			if enter >= 0 && p.z[enter] <= 0 {
				p.passive[enter] = false
				p.skip[enter] = true
				break
			}
			enter = -1
			// The largest step towards z that keeps λ ≥ 0, and the
			// passive index it stops at.
			step, block := 1.0, -1
			for j := range k {
				if p.passive[j] && p.z[j] <= 0 {
					if s := p.lambda[j] / (p.lambda[j] - p.z[j]); s < step {
						step, block = s, j
					}
				}
			}
			for j := range k {
				if p.passive[j] {
					p.lambda[j] += step * (p.z[j] - p.lambda[j])
				}
			}
			if block < 0 {
				clear(p.skip) // λ moved: every index may enter again
				break
			}
			// The blocking index leaves P even where rounding left its λ
			// a hair above 0: otherwise the same P is solved again, the
			// step shrinks towards 0 and the loop need not end.
			p.passive[block], p.lambda[block] = false, 0
			for j := range k {
				if p.passive[j] && p.lambda[j] <= 0 {
					p.passive[j], p.lambda[j] = false, 0
				}
			}
		}
	}
	return p.lambda, p.certify(a, q, xx, k)
}

// gradient writes μ = Aλ + q into p.mu.
func (p *nonNegativeQP) gradient(a, q []float64, k int) {
	for j := range k {
		p.mu[j] = q[j] + dotProduct(a[j*k:(j+1)*k], p.lambda)
	}
}

// termScale returns |q_j| + Σₗ |A_jl|λₗ, the size of the terms summed
// into μ_j, against which its rounding is measured.
func (p *nonNegativeQP) termScale(a, q []float64, k, j int) float64 {
	s := math.Abs(q[j])
	for l, v := range p.lambda {
		s += math.Abs(a[j*k+l]) * v
	}
	return s
}

// solvePassive solves A_PP z_P = −q_P into p.z (zero off P) by Cholesky
// and reports whether A_PP was positive definite.
func (p *nonNegativeQP) solvePassive(a, q []float64, k int) bool {
	p.idx = p.idx[:0]
	for j := range k {
		if p.passive[j] {
			p.idx = append(p.idx, j)
		}
	}
	z, ok := solveOn(a, k, p.idx, func(i int) float64 { return -q[i] })
	if !ok {
		return false
	}
	clear(p.z)
	for r, i := range p.idx {
		p.z[i] = z.AtVec(r)
	}
	return true
}

// solveOn solves A_SS x = b_S for the K×K matrix a restricted to the
// indices S, b's entries given by rhs, by Cholesky, and reports whether
// A_SS was numerically positive definite.
func solveOn(a []float64, k int, s []int, rhs func(i int) float64) (*mat.VecDense, bool) {
	n := len(s)
	sub := mat.NewSymDense(n, nil)
	b := mat.NewVecDense(n, nil)
	for r, i := range s {
		b.SetVec(r, rhs(i))
		for c := r; c < n; c++ {
			sub.SetSym(r, c, a[i*k+s[c]])
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(sub) {
		return nil, false
	}
	var x mat.VecDense
	if err := chol.SolveVecTo(&x, b); err != nil && !isConditionError(err) {
		return nil, false
	}
	return &x, true
}

// certify checks the optimality conditions at p.lambda. A μⱼ of an
// index outside the passive set P = {l : λₗ > 0} is held to the rounding
// of its own terms plus what it inherits from the passive residuals: its
// row of A is, up to what lies outside the passive rows' span,
// Σₗ cₗ A_l· with c = A_PP⁻¹ A_Pj, so μⱼ carries Σₗ |cₗ| times their
// rounding. Where two passive gradients are nearly opposite and gⱼ lies
// in their plane, c reaches 10⁶ and μⱼ is known to no better (a toy run's
// set in the tests). Failing that, an inactive μⱼ < 0 passes where the
// projection y = x + Gᵀλ conflicts with gⱼ by a cosine of at most
// nnqpAngle (μⱼ = gⱼ·y on the scaled problem, xx = ‖x‖² on it): where
// the cone is a thin wedge between nearly opposite gradients, the exact
// projection takes multipliers of 10⁷ and more that the passive system
// cannot resolve, and y differs from it, though it worsens no task.
func (p *nonNegativeQP) certify(a, q []float64, xx float64, k int) error {
	p.gradient(a, q, k)
	var yy float64 // ‖y‖² on the scaled problem, when needed
	for j := range k {
		tol := nnqpTol * p.termScale(a, q, k, j)
		if p.lambda[j] == 0 && p.mu[j] < -tol {
			tol += nnqpTol * p.inherited(a, q, k, j)
		}
		if p.lambda[j] == 0 && p.mu[j] < -tol {
			if yy == 0 {
				yy = xx
				for l, v := range p.lambda {
					yy += v * (2*q[l] + dotProduct(a[l*k:(l+1)*k], p.lambda))
				}
				yy = math.Max(yy, 0)
			}
			tol = math.Max(tol, nnqpAngle*math.Sqrt(a[j*k+j]*yy))
		}
		if p.lambda[j] < 0 || p.mu[j] < -tol || (p.lambda[j] > 0 && p.mu[j] > tol) {
			return fmt.Errorf("the dual problem's solution is not certified: λ%d = %.3g with μ%d = %.3g (tolerance %.3g)", j, p.lambda[j], j, p.mu[j], tol)
		}
	}
	return nil
}

// inherited returns Σₗ |cₗ|·termScale(l) over the passive set P, with
// A_PP c = A_Pj: the rounding μⱼ inherits from the passive residuals. It
// returns 0 where P is empty or A_PP is not numerically positive
// definite.
func (p *nonNegativeQP) inherited(a, q []float64, k, j int) float64 {
	p.idx = p.idx[:0]
	for l := range k {
		if p.lambda[l] > 0 {
			p.idx = append(p.idx, l)
		}
	}
	if len(p.idx) == 0 {
		return 0
	}
	c, ok := solveOn(a, k, p.idx, func(i int) float64 { return a[i*k+j] })
	if !ok {
		return 0
	}
	s := 0.0
	for r, l := range p.idx {
		s += math.Abs(c.AtVec(r)) * p.termScale(a, q, k, l)
	}
	return s
}
