package aggregate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// DefaultFairGradAlpha is FairGrad's default α, LibMTL's.
const DefaultFairGradAlpha = 1.0

// FairGrad is fair resource allocation between the tasks (Ban & Ji,
// "Fair Resource Allocation in Multi-Task Learning", ICML 2024, as
// LibMTL's FairGrad computes it): the direction d = Gᵀw maximises the α-fair
// utility Σᵢ uᵢ^(1−α)/(1−α) (Σᵢ log uᵢ at α = 1) of the tasks' shares
// uᵢ = gᵢ·d, and its weights w > 0 solve
//
//	(GGᵀw)ᵢ = wᵢ^(−1/α) for every task i.
//
// At α = 1 these are Nash-MTL's equations (NashMTL, unclipped); larger α
// favours the tasks with the smallest share, α → ∞ tending to max-min
// fairness, and α → 0 to the plain sum of the shares.
//
// The equations say w minimises the strictly convex
// F(w) = ½wᵀGGᵀw − Σᵢ φ(wᵢ), φ′(w) = w^(−1/α), over w > 0 (LibMTL
// solves them as a bounded least-squares problem from w = 1/K). Here F
// is minimised by Newton's method with a backtracking line search, in
// the unit gradients' variables vᵢ = ‖gᵢ‖wᵢ (where the equations read
// (ÛÛᵀv)ᵢ = ‖gᵢ‖^(1/α−1) vᵢ^(−1/α)), to a relative residual of 1e-12 in
// every equation. As for Nash-MTL, a minimiser exists if and only if 0
// is not in the convex hull of the gradients; where it is (a zero
// gradient, opposite gradients, a squared distance of the unit
// gradients' hull to 0 of at most 1e-8) the point is Pareto-stationary
// and d = 0.
//
// Sign and scale: the gradients are loss gradients and d is a descent
// direction (gᵢ·d = wᵢ^(−1/α) > 0 for every task) for θ ← θ − lr·d;
// negating G leaves GGᵀ and w unchanged and negates d. The scale is the
// equations' own, unclipped, as in LibMTL (at α = 1, ‖d‖ = √K).
//
// It computes on the host (on a GPU host, from the gradients copied
// there), in O(K²d) operations for the Gram matrix and O(K³) per Newton
// step.
type FairGrad struct {
	// Alpha is α > 0; 0 means DefaultFairGradAlpha.
	Alpha float64

	gram, w, hullWeights []float64
	nash                 nashNewton // the unit Gram matrix and norms
	hull                 minnorm.Solver
	solver               fairNewton
}

// Aggregate implements Aggregator.
func (a *FairGrad) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, _, err := checkGradients("fairgrad", dst, g)
	if err != nil {
		return err
	}
	alpha := a.Alpha
	if alpha == 0 {
		alpha = DefaultFairGradAlpha
	}
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return fmt.Errorf("fairgrad: α = %v, want a positive number", alpha)
	}
	a.gram = gramInto(a.gram, g)
	a.w = growFloats(a.w, k)
	a.hullWeights = growFloats(a.hullWeights, k)
	err = unitGram(a.gram, k, &a.nash, &a.hull, a.hullWeights)
	if errors.Is(err, errZeroInConvexHull) {
		clear(dst)
		return nil
	}
	if err != nil {
		return fmt.Errorf("fairgrad: %w", err)
	}
	if err := a.solver.solve(a.w, a.nash.m, a.nash.norm, alpha, k); err != nil {
		return fmt.Errorf("fairgrad: %w", err)
	}
	for i := range a.w {
		a.w[i] /= a.nash.norm[i]
	}
	combineRows(dst, a.w, g)
	return nil
}

// Settings of FairGrad's weight solve.
const (
	fairResidual  = 1e-12 // max |(M̂v)ᵢvᵢ^(1/α)/cᵢ − 1| reached
	fairDecrement = 1e-7  // Newton decrement of a converged full step
	fairNear      = 1e-3  // Newton decrement below which full steps are taken
	fairMaxIter   = 500   // Newton steps
)

// fairNewton holds the buffers of FairGrad's Newton solve.
type fairNewton struct {
	mv, c, trial []float64
	hess         *mat.SymDense
	chol         mat.Cholesky
}

// solve writes into v the minimiser of
// F(v) = ½vᵀMv − Σᵢ cᵢφ(vᵢ), cᵢ = normᵢ^(1/α−1), for the unit Gram
// matrix m, from vᵢ = cᵢ^(α/(α+1)) (the answer were the gradients
// orthogonal). Its steps are solved in the variables y = V⁻¹Δ,
// V = diag(v), and backtracked until F decreases enough and v stays
// positive.
func (p *fairNewton) solve(v, m, norm []float64, alpha float64, k int) error {
	p.mv = growFloats(p.mv, k)
	p.c = growFloats(p.c, k)
	p.trial = growFloats(p.trial, k)
	if p.hess == nil || p.hess.SymmetricDim() != k {
		p.hess = mat.NewSymDense(k, nil)
	}
	for i := range k {
		p.c[i] = math.Pow(norm[i], 1/alpha-1)
		v[i] = math.Pow(p.c[i], alpha/(alpha+1))
	}
	rhs := mat.NewVecDense(k, nil)
	var y mat.VecDense
	for range fairMaxIter {
		worst := 0.0
		for i := range k {
			p.mv[i] = dotProduct(m[i*k:(i+1)*k], v)
			worst = math.Max(worst, math.Abs(p.mv[i]*math.Pow(v[i], 1/alpha)/p.c[i]-1))
		}
		if worst <= fairResidual {
			return nil
		}
		for i := range k {
			// V∇F, whose entries are vᵢ(Mv)ᵢ − cᵢvᵢ^(1−1/α).
			share := p.c[i] * math.Pow(v[i], 1-1/alpha)
			rhs.SetVec(i, -(v[i]*p.mv[i] - share))
			for j := i; j < k; j++ {
				h := v[i] * m[i*k+j] * v[j]
				if i == j {
					h += share / alpha
				}
				p.hess.SetSym(i, j, h)
			}
		}
		if !p.chol.Factorize(p.hess) {
			return errors.New("the Newton system is not positive definite")
		}
		if err := p.chol.SolveVecTo(&y, rhs); err != nil && !isConditionError(err) {
			return fmt.Errorf("the Newton system: %w", err)
		}
		// ∇F·Δ = −λ², λ the Newton decrement.
		decrement2 := math.Max(mat.Dot(rhs, &y), 0)
		// Near the minimiser (λ ≤ 1e-3) F's decrease is below its
		// rounding and the full step is taken as it is: Newton converges
		// quadratically there. Farther, the step is halved until F
		// decreases by a quarter of what its slope promises.
		near := decrement2 <= fairNear*fairNear
		f := p.objective(v, m, alpha, k)
		t := 1.0
		for ; t > 1e-12; t /= 2 {
			ok := true
			for i := range k {
				p.trial[i] = v[i] * (1 + t*y.AtVec(i))
				ok = ok && p.trial[i] > 0
			}
			if ok && (near || p.objective(p.trial, m, alpha, k) <= f-0.25*t*decrement2) {
				break
			}
		}
		if t <= 1e-12 {
			return fmt.Errorf("no step along the Newton direction decreases F (decrement %.3g)", math.Sqrt(decrement2))
		}
		copy(v, p.trial)
		if t == 1 && decrement2 <= fairDecrement*fairDecrement {
			return nil
		}
	}
	return fmt.Errorf("the weights did not converge in %d Newton steps", fairMaxIter)
}

// objective is F(v) = ½vᵀMv − Σᵢ cᵢφ(vᵢ), φ(v) = log v at α = 1 and
// v^(1−1/α)/(1−1/α) otherwise.
func (p *fairNewton) objective(v, m []float64, alpha float64, k int) float64 {
	f := 0.0
	for i := range k {
		f += 0.5 * v[i] * dotProduct(m[i*k:(i+1)*k], v)
		if alpha == 1 {
			f -= p.c[i] * math.Log(v[i])
		} else {
			e := 1 - 1/alpha
			f -= p.c[i] * math.Pow(v[i], e) / e
		}
	}
	return f
}
