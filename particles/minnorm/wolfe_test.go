package minnorm

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// supportMin is the brute-force reference for small K: the least wᵀUw
// over every support S whose equality-constrained minimiser (U_SS z = λ1,
// Σ z = 1, solved by gonum's LU) lies on the simplex. The minimiser on
// the simplex is one of these, whatever U's conditioning.
func supportMin(u []float64, k int) float64 {
	best := math.Inf(1)
	for mask := 1; mask < 1<<k; mask++ {
		var s []int
		for i := range k {
			if mask&(1<<i) != 0 {
				s = append(s, i)
			}
		}
		n := len(s) + 1
		a := mat.NewDense(n, n, nil)
		b := mat.NewVecDense(n, nil)
		for r, i := range s {
			for c, j := range s {
				a.Set(r, c, u[i*k+j])
			}
			a.Set(r, n-1, -1)
			a.Set(n-1, r, 1)
		}
		b.SetVec(n-1, 1)
		var x mat.VecDense
		if err := x.SolveVec(a, b); err != nil {
			continue // singular on this support
		}
		w := make([]float64, k)
		ok := true
		for r, i := range s {
			w[i] = x.AtVec(r)
			ok = ok && w[i] >= -1e-12
		}
		if ok {
			for i := range w {
				w[i] = math.Max(0, w[i])
			}
			best = math.Min(best, objective(u, w))
		}
	}
	return best
}

// With one direction 10⁴ times longer than the others (the scores of one
// task on a scale 10⁴ times the others'), projected gradient alone ends
// 20,000 iterations short of the tolerance on many problems of this
// family (86 of 200 when written); the active-set finish certifies every
// one. The answer is held to what the certificate promises: its value
// above the brute-force minimum over supports (supportMin) by no more
// than the certified gap, itself within the tolerance (Result.Tol,
// 1e-10 of the hull's squared diameter plus rounding). That tolerance is
// loose against the optimum here (the diameter is set by the long
// direction), so the KKT conditions are not asserted at a fixed scale.
func TestSolveCertifiesIllConditionedProblems(t *testing.T) {
	var s Solver
	projected := Solver{MaxIter: DefaultMaxIter}
	uncertifiedAlone := 0
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 104))
		k := 3 + rng.IntN(4) // K = 3..6
		d := 2 + rng.IntN(8)
		g := randomRows(rng, k, d, 0)
		for x := range g[0] {
			g[0][x] *= 1e4
		}
		u := gramOf(g)
		if !fistaCertifies(&projected, u, k) {
			uncertifiedAlone++
		}
		w := make([]float64, k)
		r, err := s.Solve(w, u)
		if err != nil {
			t.Errorf("seed %d, K = %d, d = %d: %v", seed, k, d, err)
			continue
		}
		scale := 0.0
		for i := range k {
			scale = math.Max(scale, u[i*k+i])
		}
		if ref := supportMin(u, k); r.Value > ref+r.Gap+1e-12*scale || r.Gap > r.Tol {
			t.Errorf("seed %d, K = %d: value %v, brute-force minimum %v, gap %v, tolerance %v", seed, k, r.Value, ref, r.Gap, r.Tol)
		}
	}
	t.Logf("projected gradient alone left %d of 200 uncertified", uncertifiedAlone)
	if uncertifiedAlone == 0 {
		t.Error("no problem of the family needed the active-set finish: the test no longer tests it")
	}
}

// fistaCertifies reports whether projected gradient with polishing alone
// (no active-set finish) certifies the problem within s.MaxIter.
func fistaCertifies(s *Solver, u []float64, k int) bool {
	w := make([]float64, k)
	_, shift, err := checkMatrix(u, k)
	if err != nil {
		return false
	}
	s.resize(k)
	maxB, diam := shiftInto(s.b, u, k, shift)
	aim := DefaultTol*diam + 8*float64(k)*unitRoundoff*maxB
	s.iterate(w, s.b, aim, s.MaxIter)
	return s.bestGap <= aim
}

// The case found by a random search (K = 4, one direction's squared norm
// 1.6·10⁹ against about 10 for the others): certified, with the KKT
// conditions at 1e-8 of the largest U_ii.
func TestSolveCertifiesFoundCase(t *testing.T) {
	u := []float64{
		1.6036958178478017e+09, -9151.549010307222, -56719.176368318425, -18511.89967506454,
		-9151.549010307222, 12.720004942014661, -8.816850433708757, 4.438461630676815,
		-56719.176368318425, -8.816850433708757, 15.198708893489844, 2.116190092991698,
		-18511.89967506454, 4.438461630676815, 2.116190092991698, 10.421392032443464,
	}
	var s Solver
	w := make([]float64, 4)
	_, err := s.Solve(w, u)
	var nc *NotConvergedError
	if errors.As(err, &nc) || err != nil {
		t.Fatalf("%v", err)
	}
	checkKKT(t, u, w, 1e-8)
	if ref := supportMin(u, 4); objective(u, w) > ref+1e-9*u[0] {
		t.Errorf("value %v above the brute-force minimum %v", objective(u, w), ref)
	}
}
