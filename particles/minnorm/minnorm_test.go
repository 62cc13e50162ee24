package minnorm

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
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

func objective(u, w []float64) float64 {
	k := len(w)
	f := 0.0
	for i := range k {
		for j := range k {
			f += w[i] * u[i*k+j] * w[j]
		}
	}
	return f
}

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
	// A cap of one iteration must return promptly, with an honest gap.
	rng := rand.New(rand.NewPCG(3, 3))
	u := randomGram(rng, 6, 3)
	s := Solver{MaxIter: 1, Tol: 1e-300}
	w := make([]float64, 6)
	r, err := s.Solve(w, u)
	if err != nil {
		t.Fatal(err)
	}
	if r.Iterations != 1 {
		t.Errorf("iterations = %d, want 1", r.Iterations)
	}
	if r.Converged && r.Gap > 0 {
		t.Errorf("converged with gap %v at tolerance 1e-300", r.Gap)
	}
	// The reported gap bounds the suboptimality.
	var exact Solver
	w2 := make([]float64, 6)
	best, _ := exact.Solve(w2, u)
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
