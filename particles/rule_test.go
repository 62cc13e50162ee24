package particles

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomEnsemble draws M positions in R^d and K×M scores from N(0, I).
func randomEnsemble(rng *rand.Rand, m, k, d int) Ensemble {
	e := Ensemble{Theta: randomVectors(rng, m, d, 1), Scores: make([][][]float64, k)}
	for i := range e.Scores {
		e.Scores[i] = randomVectors(rng, m, d, 1)
	}
	return e
}

func randomVectors(rng *rand.Rand, n, d int, scale float64) [][]float64 {
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, d)
		for j := range v[i] {
			v[i][j] = scale * rng.NormFloat64()
		}
	}
	return v
}

// mtsgdU runs one MT-SGD step and returns U (K×K) and the direction.
func mtsgdU(t *testing.T, r *MTSGD, e Ensemble) ([]float64, [][]float64) {
	t.Helper()
	dst := make([][]float64, len(e.Theta))
	for i := range dst {
		dst[i] = make([]float64, len(e.Theta[0]))
	}
	if err := r.Direction(dst, e); err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), r.Diagnostics().U...), dst
}

func rbf(x, y []float64, sigma float64) float64 {
	s := 0.0
	for i := range x {
		s += (x[i] - y[i]) * (x[i] - y[i])
	}
	return math.Exp(-s / (2 * sigma * sigma))
}

// partial returns ∂f/∂x_l by a central difference with step h.
func partial(f func([]float64) float64, x []float64, l int, h float64) float64 {
	xp := append([]float64(nil), x...)
	xm := append([]float64(nil), x...)
	xp[l] += h
	xm[l] -= h
	return (f(xp) - f(xm)) / (2 * h)
}

// bruteForceU evaluates Equation (Uij-1) term by term with a quadruple loop,
// taking every kernel derivative by finite differences of rbf. It shares no
// algebra with MTSGD.Direction.
func bruteForceU(e Ensemble, sigma, rho float64) []float64 {
	m, k, d := len(e.Theta), len(e.Scores), len(e.Theta[0])
	const h = 1e-4
	u := make([]float64, k*k)
	for i := range k {
		for j := range k {
			sum := 0.0
			for a := range m {
				for b := range m {
					ta, tb := e.Theta[a], e.Theta[b]
					kab := rbf(ta, tb, sigma)
					t1 := kab * dot(e.Scores[i][a], e.Scores[j][b])
					t2, t3, tr := 0.0, 0.0, 0.0
					for l := range d {
						dkdb := partial(func(y []float64) float64 { return rbf(ta, y, sigma) }, tb, l, h)
						dkda := partial(func(x []float64) float64 { return rbf(x, tb, sigma) }, ta, l, h)
						t2 += e.Scores[i][a][l] * dkdb
						t3 += e.Scores[j][b][l] * dkda
						// ∂²k/∂θ_a,l ∂θ_b,l: a difference in θ_a of a difference in θ_b.
						tr += partial(func(x []float64) float64 {
							return partial(func(y []float64) float64 { return rbf(x, y, sigma) }, tb, l, h)
						}, ta, l, h)
					}
					sum += t1 + rho*(t2+t3) + rho*rho*tr
				}
			}
			u[i*k+j] = sum / float64(m*m)
		}
	}
	return u
}

func TestMTSGDUMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ m, k, d int }{{1, 2, 3}, {3, 2, 2}, {4, 3, 5}, {6, 4, 3}} {
		for _, rho := range []float64{1, 0.25} {
			e := randomEnsemble(rng, tc.m, tc.k, tc.d)
			r := &MTSGD{Repulsion: rho}
			got, _ := mtsgdU(t, r, e)
			want := bruteForceU(e, r.Diagnostics().Sigma, rho)
			for i := range got {
				// Tolerance: the finite differences are accurate to ~1e-7.
				if math.Abs(got[i]-want[i]) > 1e-6*(1+math.Abs(want[i])) {
					t.Errorf("M=%d K=%d d=%d ρ=%v: U[%d] = %.10g, brute force %.10g", tc.m, tc.k, tc.d, rho, i, got[i], want[i])
				}
			}
		}
	}
}

// TestMTSGDUIsRKHSGram checks U against random Fourier features (Rahimi &
// Recht 2007): with z(x) = sqrt(2/D)·cos(Ωx + b), Ω ~ N(0, I/σ²), the RBF
// kernel is E[z(x)ᵀz(y)], so each φ_k becomes an explicit vector in R^{D×d}
// and U_ij = ⟨φ_i, φ_j⟩ an ordinary dot product. This uses neither the
// paper's formula nor its derivation, only the definition of φ_k.
func TestMTSGDUIsRKHSGram(t *testing.T) {
	const D = 400000
	rng := rand.New(rand.NewPCG(5, 5))
	m, k, d := 4, 3, 2
	e := randomEnsemble(rng, m, k, d)
	const sigma, rho = 1.3, 1.0
	r := &MTSGD{Kernel: RBF{Bandwidth: sigma}, Repulsion: rho}
	got, _ := mtsgdU(t, r, e)

	omega := randomVectors(rng, D, d, 1/sigma)
	phase := make([]float64, D)
	for i := range phase {
		phase[i] = 2 * math.Pi * rng.Float64()
	}
	c := math.Sqrt(2.0 / D)
	// coef[i][l] is the feature-space vector of the l-th component of φ_i.
	coef := make([][][]float64, k)
	for i := range coef {
		coef[i] = make([][]float64, d)
		for l := range coef[i] {
			coef[i][l] = make([]float64, D)
		}
	}
	for a := range m {
		for f := range D {
			arg := dot(omega[f], e.Theta[a]) + phase[f]
			z, dz := c*math.Cos(arg), -c*math.Sin(arg)
			for i := range k {
				for l := range d {
					coef[i][l][f] += (z*e.Scores[i][a][l] + rho*dz*omega[f][l]) / float64(m)
				}
			}
		}
	}
	maxDiag := 0.0
	for i := range k {
		maxDiag = math.Max(maxDiag, got[i*k+i])
	}
	for i := range k {
		for j := range k {
			want := 0.0
			for l := range d {
				want += dot(coef[i][l], coef[j][l])
			}
			// Monte Carlo error of D features is ~1/sqrt(D) ≈ 0.0016 relative;
			// allow 1% of the largest diagonal entry.
			if math.Abs(got[i*k+j]-want) > 0.01*maxDiag {
				t.Errorf("U[%d][%d] = %.5f, random-feature estimate %.5f", i, j, got[i*k+j], want)
			}
		}
	}
}

func TestMTSGDUIsSymmetricPSD(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 11))
		m, k, d := 1+rng.IntN(20), 1+rng.IntN(5), 1+rng.IntN(50)
		e := randomEnsemble(rng, m, k, d)
		// Spread the particles over several length scales.
		for _, th := range e.Theta {
			for i := range th {
				th[i] *= math.Pow(10, rng.Float64()*2-1)
			}
		}
		r := &MTSGD{Repulsion: 1, Kernel: RBF{Scale: 0.5 + rng.Float64()}}
		u, _ := mtsgdU(t, r, e)
		sym := mat.NewSymDense(k, nil)
		maxAbs := 0.0
		for i := range k {
			for j := range k {
				if u[i*k+j] != u[j*k+i] {
					t.Fatalf("seed %d: U not symmetric at (%d,%d)", seed, i, j)
				}
				sym.SetSym(i, j, u[i*k+j])
				maxAbs = math.Max(maxAbs, math.Abs(u[i*k+j]))
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(sym, false) {
			t.Fatalf("seed %d: eigendecomposition failed", seed)
		}
		if min := eig.Values(nil)[0]; min < -1e-10*maxAbs {
			t.Errorf("seed %d (M=%d K=%d d=%d): smallest eigenvalue %g < 0", seed, m, k, d, min)
		}
	}
}

// With one particle the kernel terms vanish except the constant trace term,
// ρ²·d/σ² (σ = 1 here: the median heuristic's fallback), so U is the
// gradient Gram matrix of Désidéri's MOO (paper, Section 2.3) up to a
// constant shift that does not move the QP's minimiser.
func TestMTSGDSingleParticleIsMOO(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const k, d = 3, 4
	e := randomEnsemble(rng, 1, k, d)
	for _, rho := range []float64{0, 1} {
		u, _ := mtsgdU(t, &MTSGD{Repulsion: rho}, e)
		for i := range k {
			for j := range k {
				want := dot(e.Scores[i][0], e.Scores[j][0]) + rho*rho*d
				if math.Abs(u[i*k+j]-want) > 1e-12*math.Abs(want) {
					t.Errorf("ρ=%v: U[%d][%d] = %v, want ⟨g_i,g_j⟩ + ρ²d/σ² = %v", rho, i, j, u[i*k+j], want)
				}
			}
		}
	}
}

// As σ → ∞, U_ij tends to the mean over (a, b) of ⟨g_i(θ_a), g_j(θ_b)⟩
// (paper, Section 2.3); the other terms are O(1/σ²).
func TestMTSGDLargeBandwidthLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m, k, d := 7, 3, 5
	e := randomEnsemble(rng, m, k, d)
	u, _ := mtsgdU(t, &MTSGD{Repulsion: 1, Kernel: RBF{Bandwidth: 1e5}}, e)
	for i := range k {
		for j := range k {
			want := 0.0
			for a := range m {
				for b := range m {
					want += dot(e.Scores[i][a], e.Scores[j][b])
				}
			}
			want /= float64(m * m)
			if math.Abs(u[i*k+j]-want) > 1e-6 {
				t.Errorf("U[%d][%d] = %v, σ→∞ limit %v", i, j, u[i*k+j], want)
			}
		}
	}
}

// Lemma 1: ⟨φ*, φ_i⟩ ≥ ‖φ*‖² for every target i, with the RKHS inner
// products read from U: (Uw*)_i ≥ w*ᵀUw*. The tolerance is the QP's own
// reported gap (≤ 1e-10·max U_ii) plus rounding.
func TestMTSGDLemma1(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 13))
		m, k, d := 2+rng.IntN(15), 2+rng.IntN(4), 1+rng.IntN(20)
		e := randomEnsemble(rng, m, k, d)
		r := &MTSGD{Repulsion: rng.Float64()}
		u, _ := mtsgdU(t, r, e)
		diag := r.Diagnostics()
		w := diag.Weights
		norm2 := 0.0
		scale := 0.0
		for i := range k {
			scale = math.Max(scale, u[i*k+i])
			for j := range k {
				norm2 += w[i] * u[i*k+j] * w[j]
			}
		}
		for i := range k {
			inner := dot(u[i*k:(i+1)*k], w)
			if inner < norm2-diag.QP.Gap/2-1e-12*scale {
				t.Errorf("seed %d: ⟨φ*,φ_%d⟩ = %v < ‖φ*‖² = %v", seed, i, inner, norm2)
			}
		}
	}
}

// The repulsive term is ρ·(1/M)Σ_a ∇_{θ_a}k(θ_a,θ_m); compare the kernel's
// analytic gradient with central differences of rbf.
func TestKernelGradientMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	m, d := 5, 3
	theta := randomVectors(rng, m, d, 1)
	const sigma = 0.9
	var km kernelMatrix
	RBF{Bandwidth: sigma}.compute(&km, theta)
	for mm := range m {
		for l := range d {
			want := 0.0
			for a := range m {
				want += partial(func(x []float64) float64 { return rbf(x, theta[mm], sigma) }, theta[a], l, 1e-5)
			}
			got := km.rep[mm][l] / km.sigma2
			if math.Abs(got-want) > 1e-8 {
				t.Errorf("particle %d, coordinate %d: ∇k = %v, finite differences %v", mm, l, got, want)
			}
		}
	}
}

func TestMedianHeuristic(t *testing.T) {
	// Points 0, 1, 3 on a line: squared distances {0,0,0,1,1,4,4,9,9},
	// median 1, so h = 1/(2 log 4) and σ² = h·scale².
	theta := [][]float64{{0}, {1}, {3}}
	var km kernelMatrix
	RBF{Scale: 2}.compute(&km, theta)
	want := 4 / (2 * math.Log(4))
	if math.Abs(km.sigma2-want) > 1e-15 {
		t.Errorf("σ² = %v, want %v", km.sigma2, want)
	}
	// At the median distance the kernel is 1/(M+1) for scale 1.
	RBF{}.compute(&km, theta)
	if got := km.k[0][1]; math.Abs(got-0.25) > 1e-15 {
		t.Errorf("k at the median distance = %v, want 1/(M+1) = 0.25", got)
	}
}

// SVGD with one particle and σ → ∞ is plain gradient ascent on log p.
func TestSVGDSingleParticleIsGradientAscent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	e := randomEnsemble(rng, 1, 1, 6)
	dst := [][]float64{make([]float64, 6)}
	r := &SVGD{Repulsion: 1, Kernel: RBF{Bandwidth: 1e8}}
	if err := r.Direction(dst, e); err != nil {
		t.Fatal(err)
	}
	for i, v := range dst[0] {
		if v != e.Scores[0][0][i] {
			t.Errorf("φ[%d] = %v, want the score %v", i, v, e.Scores[0][0][i])
		}
	}
}

// MT-SGD with one target has w* = 1 and is exactly SVGD.
func TestMTSGDOneTargetIsSVGD(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	e := randomEnsemble(rng, 9, 1, 4)
	_, got := mtsgdU(t, &MTSGD{Repulsion: 0.7}, e)
	want := make([][]float64, 9)
	for i := range want {
		want[i] = make([]float64, 4)
	}
	if err := (&SVGD{Repulsion: 0.7}).Direction(want, e); err != nil {
		t.Fatal(err)
	}
	for m := range got {
		for i := range got[m] {
			if math.Abs(got[m][i]-want[m][i]) > 1e-14 {
				t.Fatalf("particle %d: MT-SGD %v, SVGD %v", m, got[m], want[m])
			}
		}
	}
}

// The direction is Σ_k w*_k φ_k(θ_m) with φ_k from its definition, the
// kernel gradient taken by finite differences.
func TestMTSGDDirectionMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m, k, d := 5, 3, 3
	e := randomEnsemble(rng, m, k, d)
	r := &MTSGD{Repulsion: 1}
	_, got := mtsgdU(t, r, e)
	sigma, w := r.Diagnostics().Sigma, r.Diagnostics().Weights
	for mm := range m {
		for l := range d {
			want := 0.0
			for i := range k {
				phi := 0.0
				for a := range m {
					phi += rbf(e.Theta[a], e.Theta[mm], sigma) * e.Scores[i][a][l]
					phi += partial(func(x []float64) float64 { return rbf(x, e.Theta[mm], sigma) }, e.Theta[a], l, 1e-5)
				}
				want += w[i] * phi / float64(m)
			}
			if math.Abs(got[mm][l]-want) > 1e-8 {
				t.Errorf("particle %d coordinate %d: %v, definition %v", mm, l, got[mm][l], want)
			}
		}
	}
}

func TestMGDAAndLinearKnownAnswers(t *testing.T) {
	// Two orthogonal scores of equal norm: MGDA takes their average, as does
	// linear scalarisation with equal weights.
	e := Ensemble{
		Theta:  [][]float64{{0, 0}},
		Scores: [][][]float64{{{2, 0}}, {{0, 2}}},
	}
	for name, r := range map[string]Rule{"mgda": &MGDA{}, "linear": &Linear{}} {
		dst := [][]float64{make([]float64, 2)}
		if err := r.Direction(dst, e); err != nil {
			t.Fatal(err)
		}
		if math.Abs(dst[0][0]-1) > 1e-12 || math.Abs(dst[0][1]-1) > 1e-12 {
			t.Errorf("%s: %v, want [1 1]", name, dst[0])
		}
	}
	// Scores (1,0) and (3,0): MGDA keeps the shorter one; linear with
	// weights (0.25, 0.75) gives 2.5.
	e.Scores = [][][]float64{{{1, 0}}, {{3, 0}}}
	dst := [][]float64{make([]float64, 2)}
	if err := (&MGDA{}).Direction(dst, e); err != nil || dst[0][0] != 1 {
		t.Errorf("mgda: %v, %v; want [1 0]", dst[0], err)
	}
	if err := (&Linear{Weights: []float64{0.25, 0.75}}).Direction(dst, e); err != nil || dst[0][0] != 2.5 {
		t.Errorf("linear: %v, %v; want [2.5 0]", dst[0], err)
	}
}

// MOO-SVGD with one particle and σ → ∞ is MGDA.
func TestMOOSVGDSingleParticleIsMGDA(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	e := randomEnsemble(rng, 1, 3, 5)
	got := [][]float64{make([]float64, 5)}
	want := [][]float64{make([]float64, 5)}
	if err := (&MOOSVGD{Repulsion: 1, Kernel: RBF{Bandwidth: 1e8}}).Direction(got, e); err != nil {
		t.Fatal(err)
	}
	if err := (&MGDA{}).Direction(want, e); err != nil {
		t.Fatal(err)
	}
	for i := range got[0] {
		if math.Abs(got[0][i]-want[0][i]) > 1e-12 {
			t.Fatalf("moo-svgd %v, mgda %v", got[0], want[0])
		}
	}
}

func TestRulesRejectBadEnsembles(t *testing.T) {
	good := Ensemble{Theta: [][]float64{{0, 0}, {1, 1}}, Scores: [][][]float64{{{1, 0}, {0, 1}}}}
	dst := [][]float64{make([]float64, 2), make([]float64, 2)}
	bad := map[string]struct {
		e   Ensemble
		dst [][]float64
	}{
		"no particles":      {Ensemble{Scores: good.Scores}, nil},
		"no targets":        {Ensemble{Theta: good.Theta}, dst},
		"short destination": {good, dst[:1]},
		"ragged scores":     {Ensemble{Theta: good.Theta, Scores: [][][]float64{{{1, 0}, {0}}}}, dst},
		"score for one":     {Ensemble{Theta: good.Theta, Scores: [][][]float64{{{1, 0}}}}, dst},
		"NaN score":         {Ensemble{Theta: good.Theta, Scores: [][][]float64{{{math.NaN(), 0}, {0, 1}}}}, dst},
		"ragged particles":  {Ensemble{Theta: [][]float64{{0, 0}, {1}}, Scores: good.Scores}, dst},
	}
	for name, r := range map[string]Rule{
		"mtsgd": &MTSGD{Repulsion: 1}, "svgd": &SVGD{Repulsion: 1}, "moo-svgd": &MOOSVGD{Repulsion: 1},
		"mgda": &MGDA{}, "linear": &Linear{},
	} {
		if err := r.Direction(dst, good); err != nil {
			t.Errorf("%s on a good ensemble: %v", name, err)
		}
		for what, b := range bad {
			if err := r.Direction(b.dst, b.e); err == nil {
				t.Errorf("%s: %s: no error", name, what)
			}
		}
	}
	if err := (&Linear{Weights: []float64{1, 2}}).Direction(dst, good); err == nil {
		t.Error("linear with 2 weights for 1 target: no error")
	}
}

// The median is taken over pairs only; compare with numpy's median of all M²
// entries computed by brute force, for odd and even M.
func TestMedianMatchesFullMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for m := 1; m <= 9; m++ {
		theta := randomVectors(rng, m, 3, 1)
		var km kernelMatrix
		RBF{}.compute(&km, theta)
		var all []float64
		for _, row := range km.d2 {
			all = append(all, row...)
		}
		slices.Sort(all)
		n := len(all)
		med := all[n/2]
		if n%2 == 0 {
			med = (all[n/2-1] + all[n/2]) / 2
		}
		h := med / (2 * math.Log(float64(m)+1))
		if h == 0 {
			h = 1
		}
		if math.Abs(km.sigma2-h) > 1e-15*h {
			t.Errorf("M=%d: σ² = %v, full-matrix median gives %v", m, km.sigma2, h)
		}
	}
}

// With scores (1,0) and (0,1) at every particle, particle i of 3 moves
// along (1 − i/2, i/2): the first task alone, the middle, the second
// alone; other task or particle counts are refused.
func TestPreferenceLinear(t *testing.T) {
	e := Ensemble{
		Theta:  [][]float64{{0, 0}, {0, 0}, {0, 0}},
		Scores: [][][]float64{{{1, 0}, {1, 0}, {1, 0}}, {{0, 1}, {0, 1}, {0, 1}}},
	}
	dst := [][]float64{make([]float64, 2), make([]float64, 2), make([]float64, 2)}
	if err := (&PreferenceLinear{}).Direction(dst, e); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float64{{1, 0}, {0.5, 0.5}, {0, 1}} {
		if math.Abs(dst[i][0]-want[0]) > 1e-15 || math.Abs(dst[i][1]-want[1]) > 1e-15 {
			t.Errorf("particle %d: %v, want %v", i, dst[i], want)
		}
	}
	three := Ensemble{Theta: [][]float64{{0}, {0}}, Scores: [][][]float64{{{1}, {1}}, {{1}, {1}}, {{1}, {1}}}}
	if err := (&PreferenceLinear{}).Direction([][]float64{{0}, {0}}, three); err == nil {
		t.Error("three tasks: no error")
	}
	one := Ensemble{Theta: [][]float64{{0}}, Scores: [][][]float64{{{1}}, {{1}}}}
	if err := (&PreferenceLinear{}).Direction([][]float64{{0}}, one); err == nil {
		t.Error("one particle: no error")
	}
}
