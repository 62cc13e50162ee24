package aggregate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// errZeroInConvexHull is the weight solve's answer when 0 is in the
// convex hull of the task gradients (opposite gradients, or a zero one),
// where Nash-MTL's weights do not exist.
var errZeroInConvexHull = errors.New("0 is in the convex hull of the task gradients")

// NashMTL is Nash-MTL (Navon et al., "Multi-Task Learning as a
// Bargaining Game", ICML 2022, Algorithm 1): the Nash bargaining
// solution d = Gᵀα, α > 0 solving
//
//	αᵢ (GGᵀα)ᵢ = 1 for every task i,
//
// so that every task's share of the direction, gᵢ·d = 1/αᵢ, is inversely
// proportional to its weight. It follows from the equations that
// ‖d‖² = αᵀGGᵀα = K: d has norm √K, whatever the gradients' scale; it is
// not clipped here. The authors' code and LibMTL clip the update to norm
// 1 (max_norm = 1) and torchjd normalises the direction; the authors'
// code also solves for α by a sequence of convex programs (CVXPY),
// optionally only every few steps, where here the equations are solved
// to convergence every step.
//
// The equations say Mα = 1/α, M = GGᵀ: α is the minimiser of the
// strictly convex F(α) = ½αᵀMα − Σ log αᵢ over α > 0, found by damped
// Newton (F is self-concordant), to max |αᵢ(Mα)ᵢ − 1| ≤ 1e-12, on the
// Gram matrix of the unit vectors gᵢ/‖gᵢ‖ (αᵢ is then divided by
// ‖gᵢ‖), so that gradients of very different norms cost nothing in
// accuracy. F has a minimiser if and only if 0 is not in the convex hull
// of the gradients (otherwise it decreases without bound along the
// weights of a vanishing combination). There the point is
// Pareto-stationary, no direction improves every task, and d = 0, as
// MGDA's min-norm direction is 0 there; the official code's solver
// fails at such points and keeps its previous weights. It is so for a
// zero gradient, and when the shortest vector of the unit gradients'
// convex hull, found by package minnorm, has squared norm at most 1e-8
// (opposite gradients, say; three gradients in a plane around 0, as on
// the toy problems' Pareto sets). Near that limit the weights grow like
// the inverse of that vector's norm.
//
// Sign: the gradients are loss gradients and d is a descent direction
// (gᵢ·d = 1/αᵢ > 0 for every task) for θ ← θ − lr·d; negating G leaves M
// and α unchanged and negates d.
//
// NashMTL has no parameters: its zero value is ready to use. It
// computes on the host (on a GPU host, from the gradients copied there),
// in O(K²d) operations for the Gram matrix and O(K³) per Newton step.
type NashMTL struct {
	gram, alpha, hullWeights []float64
	newton                   nashNewton
	hull                     minnorm.Solver
}

// Aggregate implements Aggregator.
func (a *NashMTL) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, _, err := checkGradients("nash-mtl", dst, g)
	if err != nil {
		return err
	}
	a.gram = gramInto(a.gram, g)
	a.alpha = growFloats(a.alpha, k)
	a.hullWeights = growFloats(a.hullWeights, k)
	err = nashWeights(a.alpha, a.gram, k, &a.newton, &a.hull, a.hullWeights)
	if errors.Is(err, errZeroInConvexHull) {
		clear(dst)
		return nil
	}
	if err != nil {
		return fmt.Errorf("nash-mtl: %w", err)
	}
	combineRows(dst, a.alpha, g)
	return nil
}

// Settings of Nash-MTL's weight solve.
const (
	nashHullTol  = 1e-8  // least squared distance to 0 of the unit gradients' hull
	nashResidual = 1e-12 // max |αᵢ(Mα)ᵢ − 1| reached
	nashMaxIter  = 500   // Newton steps
	// nashDecrement is the Newton decrement below which α has converged
	// (after a full step at λ the error is of order λ²), though the
	// residual may not reach nashResidual in floating point.
	nashDecrement = 1e-6
)

// nashNewton holds the buffers of the Newton solve.
type nashNewton struct {
	unitGramian // the matrix M̂ solved on, and the norms
	mAlpha      []float64
	hess        *mat.SymDense
	chol        mat.Cholesky
}

// nashWeights writes into alpha the solution of αᵢ(Mα)ᵢ = 1 for the K×K
// Gram matrix gram. hull and hullW serve the check that 0 is not in the
// gradients' convex hull.
//
// Both the check and the solve work on the unit vectors uᵢ = gᵢ/‖gᵢ‖
// (unitGramian): α̂ solving the equations for M̂ gives αᵢ = α̂ᵢ/‖gᵢ‖ for M.
// So the answer does not depend on how the gradients' norms differ.
func nashWeights(alpha, gram []float64, k int, p *nashNewton, hull *minnorm.Solver, hullW []float64) error {
	if err := p.set(gram, k, hull, hullW); err != nil {
		return err
	}
	if err := p.solve(alpha, k); err != nil {
		return err
	}
	for i := range alpha {
		alpha[i] /= p.norm[i]
	}
	return nil
}

// unitGramian holds the gradients' norms and the Gram matrix of the unit
// vectors uᵢ = gᵢ/‖gᵢ‖, M̂ᵢⱼ = Mᵢⱼ/(‖gᵢ‖‖gⱼ‖), on which Nash-MTL's and
// FairGrad's weights are solved.
type unitGramian struct {
	norm, m []float64
}

// set computes them from the K×K Gram matrix gram and returns an error
// wrapping errZeroInConvexHull where 0 is in the gradients' convex hull:
// a zero gradient, or a shortest combination of the unit vectors
// (package minnorm, with hull and hullW) of squared norm at most
// nashHullTol. 0 is in the convex hull of the gᵢ exactly when it is in
// that of the uᵢ: a positive rescaling of each vector keeps its cone.
func (p *unitGramian) set(gram []float64, k int, hull *minnorm.Solver, hullW []float64) error {
	p.norm = growFloats(p.norm, k)
	for i := range k {
		p.norm[i] = math.Sqrt(gram[i*k+i])
		if p.norm[i] == 0 {
			return fmt.Errorf("the gradient of task %d is zero: %w", i, errZeroInConvexHull)
		}
	}
	p.m = growFloats(p.m, k*k)
	for i := range k {
		for j := range k {
			p.m[i*k+j] = gram[i*k+j] / (p.norm[i] * p.norm[j])
		}
		p.m[i*k+i] = 1
	}
	res, err := hull.Solve(hullW, p.m)
	if err != nil {
		return fmt.Errorf("the distance of the gradients' convex hull to 0: %w", err)
	}
	if res.Value <= nashHullTol {
		return fmt.Errorf("the shortest combination of the unit gradients has squared norm %.3g: %w", res.Value, errZeroInConvexHull)
	}
	return nil
}

// solve runs damped Newton on F(α) = ½αᵀMα − Σ log αᵢ for the matrix
// p.m (unit diagonal), from αᵢ = 1 (the solution were the gradients
// orthogonal). The step is solved in the variables y = A⁻¹Δ,
// A = diag(α): the scaled Hessian A(M + A⁻²)A = AMA + I has all its
// eigenvalues at least 1.
func (p *nashNewton) solve(alpha []float64, k int) error {
	p.mAlpha = growFloats(p.mAlpha, k)
	if p.hess == nil || p.hess.SymmetricDim() != k {
		p.hess = mat.NewSymDense(k, nil)
	}
	for i := range k {
		alpha[i] = 1
	}
	rhs := mat.NewVecDense(k, nil)
	var y mat.VecDense
	for range nashMaxIter {
		worst := 0.0
		for i := range k {
			p.mAlpha[i] = dotProduct(p.m[i*k:(i+1)*k], alpha)
			worst = math.Max(worst, math.Abs(alpha[i]*p.mAlpha[i]-1))
		}
		if worst <= nashResidual {
			return nil
		}
		for i := range k {
			// A∇F = A(Mα − 1/α), whose entries are αᵢ(Mα)ᵢ − 1.
			rhs.SetVec(i, -(alpha[i]*p.mAlpha[i] - 1))
			for j := i; j < k; j++ {
				h := alpha[i] * p.m[i*k+j] * alpha[j]
				if i == j {
					h++
				}
				p.hess.SetSym(i, j, h)
			}
		}
		if !p.chol.Factorize(p.hess) {
			return fmt.Errorf("nash-mtl: the Newton system is not positive definite")
		}
		if err := p.chol.SolveVecTo(&y, rhs); err != nil && !isConditionError(err) {
			return fmt.Errorf("nash-mtl: the Newton system: %w", err)
		}
		// Newton decrement λ = √(yᵀ(AMA + I)y) = √(−rhsᵀy); the damped
		// step 1/(1+λ) of a self-concordant function stays in the domain
		// (|yᵢ| ≤ λ, so αᵢ(1 + t·yᵢ) > 0) and decreases F; full steps once
		// λ < ¼, where Newton converges quadratically.
		lambda := math.Sqrt(math.Max(mat.Dot(rhs, &y), 0))
		t := 1.0
		if lambda >= 0.25 {
			t = 1 / (1 + lambda)
		}
		for i := range k {
			alpha[i] *= 1 + t*y.AtVec(i)
		}
		if lambda <= nashDecrement {
			// That full step moved every αᵢ by a factor within 1e-6 of
			// 1, and Newton's convergence is quadratic there (an error
			// of order λ², 1e-12, remains): α is the solution, and the
			// residual, whose rounding grows like α², is as small as
			// floating point makes it (near a hull of 0, α is large).
			return nil
		}
	}
	return fmt.Errorf("nash-mtl: the weights did not converge in %d Newton steps", nashMaxIter)
}
