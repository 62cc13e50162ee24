package minnorm

// The active-set finish. Projected gradient converges at a rate set by
// the ratio of U's largest to its smallest curvature along the simplex;
// when one direction is 10⁴ times longer than the others that ratio is
// 10⁸, and 20,000 iterations may end short of the tolerance even with
// polishing, because the support never settles. Wolfe's algorithm
// ("Finding the nearest point in a polytope", Math. Programming 11,
// 1976) does not depend on the conditioning: it keeps a corral, a set of
// directions whose affine hull's nearest point to the origin lies inside
// their convex hull, adds the direction most opposed to the current point
// (least (Uw)_i) and, where the new affine minimiser leaves the simplex,
// steps back to its boundary and drops the directions that reach zero
// weight. In exact arithmetic it ends at the minimiser in finitely many
// steps; here it stops as soon as a point's gap is at most the aim.

// wolfeReserve is the number of steps kept back from projected gradient
// for the active-set finish at size k: Wolfe's algorithm typically takes
// a few steps per direction.
func wolfeReserve(k int) int { return 20*k + 100 }

// wolfe runs Wolfe's algorithm on the Gram-like matrix u from the vertex
// of the shortest direction, for at most maxIter steps (a step is one
// affine solve), offering every point it reaches to keep, and returns the
// steps used. It stops when a point has a gap of at most aim, when the
// corral's system is singular (rounding made its directions affinely
// dependent), or when no direction can enter.
func (s *Solver) wolfe(w, u []float64, aim float64, maxIter int) int {
	k := len(w)
	start := 0
	for i := range k {
		if u[i*k+i] < u[start*k+start] {
			start = i
		}
	}
	clear(w)
	clear(s.corral)
	w[start], s.corral[start] = 1, true
	steps := 0
	for steps < maxIter {
		if s.keep(w, u, aim) {
			return steps
		}
		// The direction most opposed to the point enters the corral.
		mulVec(s.uw, u, w)
		enter := 0
		for i := range k {
			if s.uw[i] < s.uw[enter] {
				enter = i
			}
		}
		if s.corral[enter] || s.uw[enter] >= dot(w, s.uw) {
			return steps
		}
		s.corral[enter] = true
		// Minor cycles: move to the corral's affine minimiser, or as far
		// towards it as the simplex allows, dropping what reaches zero.
		for steps < maxIter {
			steps++
			s.support = s.support[:0]
			for i, in := range s.corral {
				if in {
					s.support = append(s.support, i)
				}
			}
			if !s.kktSolve(w, u, 0) {
				return steps
			}
			z := s.kkt
			theta, leave := 1.0, -1
			for _, i := range s.support {
				if z[i] <= 0 {
					t := 0.0 // a direction at zero weight that would go negative: no step
					if d := w[i] - z[i]; d > 0 {
						t = w[i] / d
					}
					if t < theta || leave < 0 {
						theta, leave = t, i
					}
				}
			}
			if leave < 0 {
				copy(w, z)
				break
			}
			sum := 0.0
			for _, i := range s.support {
				w[i] += theta * (z[i] - w[i])
				if w[i] <= 0 || i == leave {
					w[i], s.corral[i] = 0, false
				}
				sum += w[i]
			}
			for _, i := range s.support {
				w[i] /= sum
			}
		}
	}
	return steps
}
