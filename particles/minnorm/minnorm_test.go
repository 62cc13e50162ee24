package minnorm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/particles/internal/simplextest"
)

// randomGram returns U = GGᵀ for a random K×d matrix G whose rows have
// norms spread over several orders of magnitude. d < K gives a singular U.
func randomGram(rng *rand.Rand, k, d int) []float64 {
	g := make([][]float64, k)
	for i := range g {
		g[i] = make([]float64, d)
		scale := math.Pow(10, 2*rng.Float64()-1)
		for j := range g[i] {
			g[i][j] = scale * rng.NormFloat64()
		}
	}
	u := make([]float64, k*k)
	for i := range k {
		for j := range k {
			u[i*k+j] = dot(g[i], g[j])
		}
	}
	return u
}

// objective is wᵀUw, computed independently of the solver.
var objective = simplextest.Objective

// gridMin is the brute-force reference: the minimum of wᵀUw over all points
// of the simplex whose coordinates are multiples of 1/n.
func gridMin(u []float64, k, n int) float64 {
	best := math.Inf(1)
	w := make([]float64, k)
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == k-1 {
			w[i] = float64(left) / float64(n)
			best = math.Min(best, objective(u, w))
			return
		}
		for c := 0; c <= left; c++ {
			w[i] = float64(c) / float64(n)
			rec(i+1, left-c)
		}
	}
	rec(0, n)
	return best
}

// checkKKT verifies the optimality conditions of min wᵀUw on the simplex:
// feasibility, (Uw)_i ≥ wᵀUw for all i and (Uw)_i = wᵀUw where w_i > 0,
// all up to tol·max_i U_ii.
func checkKKT(t *testing.T, u, w []float64, tol float64) {
	t.Helper()
	k := len(w)
	scale := 0.0
	sum := 0.0
	for i := range k {
		scale = math.Max(scale, u[i*k+i])
		sum += w[i]
		if w[i] < 0 {
			t.Fatalf("w[%d] = %v < 0", i, w[i])
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("Σw = %v, want 1", sum)
	}
	f := objective(u, w)
	for i := range k {
		ui := dot(u[i*k:(i+1)*k], w)
		if ui < f-tol*scale {
			t.Errorf("(Uw)_%d = %v < wᵀUw = %v: not optimal", i, ui, f)
		}
		if w[i] > 1e-6 && ui > f+tol*scale {
			t.Errorf("w_%d = %v > 0 but (Uw)_%d = %v ≠ wᵀUw = %v", i, w[i], i, ui, f)
		}
	}
}

func TestSolveMatchesGridBruteForce(t *testing.T) {
	// Grid resolutions: K=2 step 1/2000, K=3 1/200, K=4 1/60.
	grid := map[int]int{2: 2000, 3: 200, 4: 60}
	rng := rand.New(rand.NewPCG(1, 2))
	var s Solver
	for k := 2; k <= 4; k++ {
		for trial := range 40 {
			d := 1 + trial%6 // d < K makes U singular
			u := randomGram(rng, k, d)
			w := make([]float64, k)
			r, err := s.Solve(w, u)
			if err != nil {
				t.Fatal(err)
			}
			ref := gridMin(u, k, grid[k])
			scale := math.Max(u[0], math.Max(u[k+1], u[k*k-1]))
			// The grid only contains feasible points, so the optimum can
			// never be above the grid's best value.
			if r.Value > ref+1e-10*scale {
				t.Errorf("K=%d trial %d: solver value %v above grid minimum %v", k, trial, r.Value, ref)
			}
			if math.Abs(r.Value-objective(u, w)) > 1e-12*scale {
				t.Errorf("K=%d: reported value %v, recomputed %v", k, r.Value, objective(u, w))
			}
			if !r.Converged {
				t.Errorf("K=%d trial %d: not converged, gap %v after %d iterations", k, trial, r.Gap, r.Iterations)
			}
		}
	}
}

func TestSolveSatisfiesKKTOnRandomProblems(t *testing.T) {
	var s Solver
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		k := 2 + rng.IntN(9) // K = 2..10
		d := 1 + rng.IntN(12)
		u := randomGram(rng, k, d)
		w := make([]float64, k)
		r, err := s.Solve(w, u)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged {
			t.Errorf("seed %d K=%d d=%d: gap %v after %d iterations", seed, k, d, r.Gap, r.Iterations)
		}
		checkKKT(t, u, w, 1e-8)
	}
}

func TestSolveKnownAnswers(t *testing.T) {
	tests := []struct {
		name string
		u    []float64
		want []float64
	}{
		// Two orthogonal unit vectors: their midpoint is the shortest.
		{"orthogonal K=2", []float64{1, 0, 0, 1}, []float64{0.5, 0.5}},
		// e1 and 2e1: e1 itself is the shortest point of the segment.
		{"collinear K=2", []float64{1, 2, 2, 4}, []float64{1, 0}},
		// Three orthonormal vectors: the centroid, norm² 1/3.
		{"orthonormal K=3", []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, []float64{1. / 3, 1. / 3, 1. / 3}},
		// g1 = (1,0), g2 = (0,1), g3 = (2,2): g3 is dominated, answer as K=2.
		{"dominated K=3", []float64{1, 0, 2, 0, 1, 2, 2, 2, 8}, []float64{0.5, 0.5, 0}},
		// g1 = (1,0), g2 = (-1,0), g3 = (0,1): 0 is in the hull, w = (½,½,0).
		{"zero in hull K=3", []float64{1, -1, 0, -1, 1, 0, 0, 0, 1}, []float64{0.5, 0.5, 0}},
		{"K=1", []float64{3}, []float64{1}},
	}
	var s Solver
	for _, tt := range tests {
		w := make([]float64, len(tt.want))
		if _, err := s.Solve(w, tt.u); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i := range w {
			if math.Abs(w[i]-tt.want[i]) > 1e-9 {
				t.Errorf("%s: w = %v, want %v", tt.name, w, tt.want)
				break
			}
		}
	}
}

func TestSolveRejectsBadInput(t *testing.T) {
	var s Solver
	w := make([]float64, 2)
	if _, err := s.Solve(w, []float64{1, math.NaN(), math.NaN(), 1}); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN in U: got %v, want ErrNotFinite", err)
	}
	if _, err := s.Solve(w, []float64{1, math.Inf(1), math.Inf(1), 1}); !errors.Is(err, ErrNotFinite) {
		t.Errorf("Inf in U: got %v, want ErrNotFinite", err)
	}
	if _, err := s.Solve(w, []float64{1, 0, 0}); err == nil {
		t.Error("3 entries for K=2: no error")
	}
	if _, err := s.Solve(w, []float64{1, 0.5, 0.2, 1}); err == nil {
		t.Error("asymmetric U: no error")
	}
	if _, err := s.Solve(nil, nil); err == nil {
		t.Error("K=0: no error")
	}
}

func TestSolveStopsAtMaxIter(t *testing.T) {
	// A cap of one iteration must return promptly, with an honest gap and a
	// *NotConvergedError that carries it.
	rng := rand.New(rand.NewPCG(3, 3))
	u := randomGram(rng, 6, 3)
	s := Solver{MaxIter: 1, Tol: 1e-300}
	w := make([]float64, 6)
	r, err := s.Solve(w, u)
	var nc *NotConvergedError
	if !errors.As(err, &nc) {
		t.Fatalf("got error %v, want a *NotConvergedError", err)
	}
	if r.Converged || r.Gap <= r.Tol {
		t.Errorf("error returned for a certified result: %+v", r)
	}
	if nc.Gap != r.Gap || nc.Tol != r.Tol || nc.K != 6 || nc.Iterations != 1 {
		t.Errorf("error %+v does not match the result %+v (K = 6)", nc, r)
	}
	if r.Iterations != 1 {
		t.Errorf("iterations = %d, want 1", r.Iterations)
	}
	// The reported gap bounds the suboptimality.
	var exact Solver
	w2 := make([]float64, 6)
	best, err := exact.Solve(w2, u)
	if err != nil {
		t.Fatal(err)
	}
	if r.Value-best.Value > r.Gap+1e-12 {
		t.Errorf("suboptimality %v exceeds reported gap %v", r.Value-best.Value, r.Gap)
	}
}

func TestSolveZeroMatrix(t *testing.T) {
	var s Solver
	w := make([]float64, 4)
	r, err := s.Solve(w, make([]float64, 16))
	if err != nil || r.Value != 0 || !r.Converged {
		t.Fatalf("zero U: %+v, %v", r, err)
	}
}

func BenchmarkSolveK3(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	u := randomGram(rng, 3, 2)
	var s Solver
	w := make([]float64, 3)
	for range b.N {
		if _, err := s.Solve(w, u); err != nil {
			b.Fatal(err)
		}
	}
}

// gramOf returns the Gram matrix of the rows of g.
func gramOf(g [][]float64) []float64 {
	k := len(g)
	u := make([]float64, k*k)
	for i := range k {
		for j := range k {
			u[i*k+j] = dot(g[i], g[j])
		}
	}
	return u
}

// randomRows returns k rows in R^d with N(0, 1) entries, row i scaled by
// 10^x_i with x_i uniform on [−spread/2, spread/2].
func randomRows(rng *rand.Rand, k, d int, spread float64) [][]float64 {
	g := make([][]float64, k)
	for i := range g {
		g[i] = make([]float64, d)
		scale := math.Pow(10, spread*(rng.Float64()-0.5))
		for j := range g[i] {
			g[i][j] = scale * rng.NormFloat64()
		}
	}
	return g
}

// fwGap returns the Frank-Wolfe gap 2(wᵀAw − min_i (Aw)_i) of w for A.
func fwGap(a, w []float64) float64 {
	k := len(w)
	f := objective(a, w)
	low := math.Inf(1)
	for i := range k {
		low = math.Min(low, dot(a[i*k:(i+1)*k], w))
	}
	return 2 * (f - low)
}

// TestSolveIgnoresConstantShift solves U = fl(A + c·11ᵀ) for PSD Gram
// matrices A and shifts c up to 1e9·max A_ii. Since wᵀUw = wᵀAw + c on the
// simplex, the answer must be A's, to within what float64 can hold of A
// once c is added: each entry of U is rounded by at most 2⁻⁵³(c + max A),
// and subtracting the solver's shift (the smallest entry) adds at most
// 2⁻⁵³·2max A, so the solver sees A + E (up to a constant) with
// |E_ij| ≤ e := 2⁻⁵³(c + 3max A).
//
// Tolerances, per case:
//   - Optimality against A itself: the Frank-Wolfe gap of w for A is at
//     most the reported gap plus 4e (B = A + E + const moves (Bw)_i and
//     wᵀBw by at most e each) plus 8K·2⁻⁵³·max A for evaluating the gap
//     here. A small gap for A gives the KKT conditions for A:
//     (Aw)_i ≥ wᵀAw − gap/2 for every i, and Σ_i w_i((Aw)_i − min_j (Aw)_j)
//     ≤ gap/2, so (Aw)_i exceeds the minimum only where w_i is small.
//   - Where the minimiser is unique (λ⊥(A) > 0, A of full rank), w itself:
//     for min over the simplex of wᵀAw and of wᵀ(A+E)w the minimisers differ
//     by at most ‖E‖₂/λ⊥ ≤ K·e/λ⊥ in the 2-norm (add the two variational
//     inequalities), with λ⊥ the smallest curvature of A along the simplex.
//     Both the c = 0 and the shifted solve carry such an error, hence
//     2K·e/λ⊥, plus 1e-9 for the solver's own accuracy on a fixed matrix
//     (the KKT polish, about cond·2⁻⁵³). At c = 1e9·max A and K = 10 this is
//     2.2e-6·max A/λ⊥; at c = 0 about 1e-9.
//   - The part of the tolerance the solver aims at, Tol·D + 8K·2⁻⁵³·max|B|,
//     is shift-invariant: it moves by at most DefaultTol·4e (D is a sum of
//     four entries of B) plus 8K·2⁻⁵³·2e (max |B_ij|). Result.Tol adds the
//     uncertainty of U's own entries, 8K·2⁻⁵³·max|U|.
//
// Degenerate A (rank-deficient, duplicate directions, zero) have no unique
// minimiser; for them only optimality is checked.
func TestSolveIgnoresConstantShift(t *testing.T) {
	const ulp = 0x1p-53
	families := []struct {
		name   string
		unique bool
		gen    func(rng *rand.Rand, k int) []float64
	}{
		// d = K + 3 rows with norms over one decade: full rank, unique w.
		{"full rank", true, func(rng *rand.Rand, k int) []float64 { return gramOf(randomRows(rng, k, k+3, 1)) }},
		// Norms over two decades and d ≥ K: still unique, worse conditioned.
		{"spread norms", true, func(rng *rand.Rand, k int) []float64 { return gramOf(randomRows(rng, k, k, 2)) }},
		// d < K: a face of minimisers when 0 is in the hull.
		{"rank deficient", false, func(rng *rand.Rand, k int) []float64 { return gramOf(randomRows(rng, k, 1+k/3, 2)) }},
		// Direction 1 repeats direction 0 bit for bit, direction 2 is −direction 0.
		{"duplicates", false, func(rng *rand.Rand, k int) []float64 {
			g := randomRows(rng, k, k, 1)
			copy(g[1], g[0])
			if k > 2 {
				for j := range g[2] {
					g[2][j] = -g[0][j]
				}
			}
			return gramOf(g)
		}},
		{"zero", false, func(rng *rand.Rand, k int) []float64 { return make([]float64, k*k) }},
	}
	ratios := []float64{0, 1, 1e3, 1e5, 1e7, 1e9}
	var s Solver
	worst := make(map[float64]float64) // largest error/tolerance on w per ratio
	for _, fam := range families {
		for k := 2; k <= 10; k++ {
			for seed := range uint64(25) {
				rng := rand.New(rand.NewPCG(seed, uint64(k)))
				a := fam.gen(rng, k)
				maxA := 0.0
				for i := range k {
					maxA = math.Max(maxA, a[i*k+i])
				}
				scale := maxA
				if scale == 0 {
					scale = 1
				}
				lam := 0.0
				if fam.unique {
					var err error
					if lam, err = simplextest.Curvature(a, k); err != nil {
						t.Fatal(err)
					}
					if !(lam > 0) {
						t.Fatalf("%s K=%d seed %d: λ⊥ = %v, want > 0", fam.name, k, seed, lam)
					}
				}
				w0 := make([]float64, k)
				r0, err := s.Solve(w0, a)
				if err != nil {
					t.Fatalf("%s K=%d seed %d c=0: %v", fam.name, k, seed, err)
				}
				for _, ratio := range ratios {
					c := ratio * scale
					u := make([]float64, k*k)
					for i := range u {
						u[i] = a[i] + c
					}
					w := make([]float64, k)
					r, err := s.Solve(w, u)
					where := fmt.Sprintf("%s K=%d seed %d c/maxA=%g", fam.name, k, seed, ratio)
					if err != nil || !r.Converged {
						t.Errorf("%s: %+v, %v", where, r, err)
						continue
					}
					e := ulp * (c + 3*maxA)
					if gap, bound := fwGap(a, w), r.Gap+4*e+8*float64(k)*ulp*maxA; gap > bound {
						t.Errorf("%s: gap for A %g > %g", where, gap, bound)
					}
					// The part of the tolerance the solver aims at is
					// shift-invariant; Result.Tol adds 8K·2⁻⁵³·max|U|.
					aim := r.Tol - 8*float64(k)*ulp*(c+maxA)
					aim0 := r0.Tol - 8*float64(k)*ulp*maxA
					if d := math.Abs(aim - aim0); d > DefaultTol*4*e+8*float64(k)*ulp*2*e+ulp*r.Tol {
						t.Errorf("%s: tolerance aimed at %g, %g at c = 0", where, aim, aim0)
					}
					if d := math.Abs(r.Value - objective(u, w)); d > 2*float64(k)*ulp*(c+maxA) {
						t.Errorf("%s: Value %v, wᵀUw = %v", where, r.Value, objective(u, w))
					}
					if !fam.unique {
						continue
					}
					tolW := 1e-9 + 2*float64(k)*e/lam
					for i := range w {
						diff := math.Abs(w[i] - w0[i])
						worst[ratio] = math.Max(worst[ratio], diff/tolW)
						if diff > tolW {
							t.Errorf("%s: w = %v, want %v (tolerance %g)", where, w, w0, tolW)
							break
						}
					}
				}
			}
		}
	}
	for _, ratio := range ratios {
		t.Logf("c/maxA = %g: largest |Δw_i|/tolerance %.3g", ratio, worst[ratio])
	}
}

// The projection must return a point of the simplex, even for inputs so
// large that v − θ loses everything but rounding. Reference answers by
// hand: a vector already on the simplex is its own projection; (2, 0, 0)
// projects to the vertex (1, 0, 0); adding a constant to every entry does
// not move the projection; and for (1e20, 1e20, 0) the exact answer is
// (½, ½, 0).
func TestProjectOntoSimplex(t *testing.T) {
	tests := []struct {
		v, want []float64
	}{
		{[]float64{0.2, 0.3, 0.5}, []float64{0.2, 0.3, 0.5}},
		{[]float64{2, 0, 0}, []float64{1, 0, 0}},
		{[]float64{1e6 + 0.2, 1e6 + 0.3, 1e6 + 0.5}, []float64{0.2, 0.3, 0.5}},
		{[]float64{1e20, 1e20, 0}, []float64{0.5, 0.5, 0}},
		{[]float64{-1e20, 1e20, 1e20, 3}, []float64{0, 0.5, 0.5, 0}},
	}
	var s Solver
	for _, tt := range tests {
		s.resize(len(tt.v))
		got := append([]float64(nil), tt.v...)
		s.project(got)
		sum := 0.0
		for i := range got {
			sum += got[i]
			// 1e6 + 0.2 carries an error of up to 2⁻⁵³·1e6 ≈ 1.2e-10.
			if math.Abs(got[i]-tt.want[i]) > 1e-9 || got[i] < 0 {
				t.Errorf("project(%v) = %v, want %v", tt.v, got, tt.want)
				break
			}
		}
		if math.Abs(sum-1) > 4e-16*float64(len(got)) {
			t.Errorf("project(%v) sums to %v", tt.v, sum)
		}
	}
}
