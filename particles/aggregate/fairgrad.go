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
// is minimised by Newton's method (full steps once the Newton decrement
// is below ¼, else a line search on F's slope), in the unit gradients'
// variables vᵢ = ‖gᵢ‖wᵢ (where the equations read
// (ÛÛᵀv)ᵢ = ‖gᵢ‖^(1/α−1) vᵢ^(−1/α)), to a residual of 1e-13 of the size
// of each equation's terms. α from 0.1 to 30 converges on gradients
// whose norms differ by 10⁴ (the tests); by α = 100 some weights
// underflow (10⁻²⁷² and less), and the solve may fail. As for Nash-MTL, a minimiser exists if and only if 0
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
	unit                 unitGramian
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
	err = a.unit.set(a.gram, k, &a.hull, a.hullWeights)
	if errors.Is(err, errZeroInConvexHull) {
		clear(dst)
		return nil
	}
	if err != nil {
		return fmt.Errorf("fairgrad: %w", err)
	}
	if err := a.solver.solve(a.w, a.unit.m, a.unit.norm, alpha, k); err != nil {
		return fmt.Errorf("fairgrad: %w", err)
	}
	for i := range a.w {
		a.w[i] /= a.unit.norm[i]
	}
	combineRows(dst, a.w, g)
	return nil
}

// Settings of FairGrad's weight solve.
const (
	fairResidual  = 1e-13 // max |(M̂v)ᵢ − cᵢvᵢ^(−1/α)| over its terms' size
	fairDecrement = 1e-7  // Newton decrement of a converged full step
	fairRounding  = 1e-9  // residual accepted with it
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
// V = diag(v), and taken as far as step says.
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
		// Each equation's residual against the size of its terms: a
		// task whose share is tiny has (Mv)ᵢ the difference of terms
		// many orders larger, known to their rounding alone.
		worst := 0.0
		for i := range k {
			p.mv[i] = dotProduct(m[i*k:(i+1)*k], v)
			share := p.c[i] * math.Pow(v[i], -1/alpha)
			terms := share
			for j := range k {
				terms += math.Abs(m[i*k+j]) * v[j]
			}
			worst = math.Max(worst, math.Abs(p.mv[i]-share)/terms)
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
		t := p.step(v, y.RawVector().Data, m, alpha, k, decrement2 < 1.0/16)
		if t == 0 {
			return fmt.Errorf("no step along the Newton direction decreases F (decrement %.3g)", math.Sqrt(decrement2))
		}
		p.moveTo(v, y.RawVector().Data, t, k)
		copy(v, p.trial)
		if t == 1 && decrement2 <= fairDecrement*fairDecrement && worst <= fairRounding {
			// A full step this short from a point this close: what is
			// left is rounding, which no further step removes.
			return nil
		}
	}
	return fmt.Errorf("the weights did not converge in %d Newton steps (v %v)", fairMaxIter, v)
}

// moveTo writes v∘(1 + t·y), the point t along the step, into p.trial.
func (p *fairNewton) moveTo(v, y []float64, t float64, k int) {
	for i := range k {
		p.trial[i] = v[i] * (1 + t*y[i])
	}
}

// step returns how far to go along the Newton step Δ = v∘y. Near the
// minimiser (decrement below ¼, near) it is the full step where that
// keeps v positive: Newton converges quadratically there, and F's slope
// along Δ, of the order of the decrement's cube, is below its rounding.
// Farther, it is 1 where F still decreases there, else the point where
// its slope along Δ turns positive, found by bisection (F is convex
// along the line, so it decreases up to there); 0 if no step is found.
// The slope is read rather than F's values, which differ by less than
// their rounding sooner (the barrier terms cᵢφ(vᵢ) reach 10⁶ and more
// for small α).
func (p *fairNewton) step(v, y, m []float64, alpha float64, k int, near bool) float64 {
	descends := func(t float64) bool {
		p.moveTo(v, y, t, k)
		for i := range k {
			if !(p.trial[i] > 0) {
				return false
			}
		}
		if near {
			return true
		}
		slope := 0.0
		for i := range k {
			// ∇F(x)ᵢ·Δᵢ, ∇F(x)ᵢ = (Mx)ᵢ − cᵢxᵢ^(−1/α), Δᵢ = vᵢyᵢ.
			slope += (dotProduct(m[i*k:(i+1)*k], p.trial) - p.c[i]*math.Pow(p.trial[i], -1/alpha)) * v[i] * y[i]
		}
		return slope <= 0
	}
	if descends(1) {
		return 1
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		if mid := (lo + hi) / 2; descends(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
