package aggregate

import "fmt"

// DualProj projects the mean gradient onto the dual cone of the task
// gradients, C = {y : gⱼ·y ≥ 0 for every j}, the directions that
// conflict with no task:
//
//	d = π_C(ḡ),  ḡ = (1/K) Σᵢ gᵢ.
//
// The projection onto the gradients' cone is the one of gradient
// episodic memory (Lopez-Paz & Ranzato, "Gradient Episodic Memory for
// Continual Learning", NeurIPS 2017), applied to the mean as
// the torchjd library's DualProj does (Quinton & Rey, "Jacobian Descent
// for Multi-Objective Optimization", arXiv:2406.16232). UPGrad projects
// each gradient and averages the projections; DualProj projects their
// average once, so the two agree when nothing conflicts (both are then
// the mean) and differ otherwise, the projection not being linear.
//
// The projection is computed as UPGrad's is, through its dual:
// d = ḡ + Gᵀλ with λ = argmin over λ ≥ 0 of ½λᵀ(GGᵀ)λ + (Gḡ)ᵀλ, solved
// exactly by Lawson and Hanson's active-set method on the Gram matrix
// scaled to unit largest diagonal and certified by its optimality
// conditions (see UPGrad); Aggregate returns an error if the
// certificate fails. torchjd adds 1e-4·I to the normalised Gram matrix;
// here there is no regulariser.
//
// Scale: the mean of the task gradients, as in torchjd. Sign: the
// gradients are loss gradients and d is a descent direction for
// θ ← θ − lr·d; negating G negates the cone and ḡ, so d is negated.
//
// DualProj has no parameters: its zero value is ready to use. It
// computes on the host (on a GPU host, from the gradients copied
// there), in O(K²d) operations for the Gram matrix and one small
// active-set solve.
type DualProj struct {
	gram, m, w, q []float64
	qp            nonNegativeQP
}

// Aggregate implements Aggregator.
func (a *DualProj) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, _, err := checkGradients("dualproj", dst, g)
	if err != nil {
		return err
	}
	a.gram = gramInto(a.gram, g)
	a.w = growFloats(a.w, k)
	for i := range a.w {
		a.w[i] = 1 / float64(k)
	}
	if scale := largestDiagonal(a.gram, k); scale > 0 {
		a.m = growFloats(a.m, k*k)
		for i, v := range a.gram {
			a.m[i] = v / scale
		}
		// G·ḡ, scaled: the row sums of the scaled Gram matrix over K.
		a.q = growFloats(a.q, k)
		for i := range k {
			a.q[i] = 0
			for j := range k {
				a.q[i] += a.m[i*k+j] / float64(k)
			}
		}
		xx := 0.0 // ‖ḡ‖² on the scaled problem
		for i := range k {
			xx += a.q[i] / float64(k)
		}
		lambda, err := a.qp.solve(a.m, a.q, xx, k)
		if err != nil {
			return fmt.Errorf("dualproj: projecting the mean gradient: %w", err)
		}
		for j, l := range lambda {
			a.w[j] += l
		}
	}
	combineRows(dst, a.w, g)
	return nil
}
