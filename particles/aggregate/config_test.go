package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestConFIGTwoTasksClosedForm checks K = 2 in 2-D against directions
// worked out by hand: for two independent gradients û bisects the angle
// between them (A = [[1, c], [c, 1]] gives y = (1, 1)/(1 + c), u ∝ the
// sum of the unit gradients). Tolerance: 1e-14 relative to the largest
// gradient entry.
func TestConFIGTwoTasksClosedForm(t *testing.T) {
	// The gradients at 0° and 135°: û at 67.5°, (sin 22.5°, cos 22.5°).
	s, c := math.Sin(math.Pi/8), math.Cos(math.Pi/8)
	tests := []struct {
		name string
		g    [][]float64
		want []float64
	}{
		// û = (1, 1)/√2; projections 1/√2 and 2/√2: d = (3/2)(1, 1).
		{"orthogonal", [][]float64{{1, 0}, {0, 2}}, []float64{1.5, 1.5}},
		// Projections s and c − s sum to c: d = c·(s, c).
		{"conflicting", [][]float64{{1, 0}, {-1, 1}}, []float64{c * s, c * c}},
		// The same directions, g₂ 10⁴ times longer: û is unchanged, the
		// length is s + 10⁴(c − s).
		{"1e4 larger", [][]float64{{1, 0}, {-1e4, 1e4}}, []float64{(s + 1e4*(c-s)) * s, (s + 1e4*(c-s)) * c}},
		// û = ĝ: d is the sum.
		{"identical", [][]float64{{1, 2}, {1, 2}}, []float64{2, 4}},
		{"parallel", [][]float64{{1, 2}, {3, 6}}, []float64{4, 8}},
		// A = [[1, −1], [−1, 1]]: 1 lies in its null space, u = 0, d = 0.
		{"opposite", [][]float64{{1, 0}, {-3, 0}}, []float64{0, 0}},
		// The zero gradient has no direction and adds nothing: d = g₁.
		{"zero", [][]float64{{1, 0}, {0, 0}}, []float64{1, 0}},
		{"all zero", [][]float64{{0, 0}, {0, 0}}, []float64{0, 0}},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &ConFIG{}, tt.g, Step{})
		if tol := 1e-14 * math.Max(gradientScale(tt.g), 1); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
	}
}

// configBySVD is ConFIG computed in the gradients' own space, the way
// the paper writes it: the pseudo-inverse of the K×d matrix of unit
// gradients from its singular value decomposition (gonum's, not the
// Gram matrix's eigendecomposition Aggregate uses), singular values at
// or below 1e-4 of the largest dropped (Aggregate's cutoff on A = UUᵀ,
// whose eigenvalues are their squares), then û and the sum of the
// projections onto it.
func configBySVD(t *testing.T, g [][]float64) []float64 {
	t.Helper()
	k, d := len(g), len(g[0])
	units := mat.NewDense(k, d, nil)
	for i, r := range g {
		if n := math.Sqrt(dotProduct(r, r)); n > 0 {
			for x, v := range r {
				units.Set(i, x, v/n)
			}
		}
	}
	var svd mat.SVD
	if !svd.Factorize(units, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	sigma := svd.Values(nil)
	var left, right mat.Dense
	svd.UTo(&left)
	svd.VTo(&right)
	u := make([]float64, d)
	for l, sv := range sigma {
		if sv <= 1e-4*sigma[0] {
			continue
		}
		along := 0.0
		for i := range k {
			along += left.At(i, l)
		}
		for x := range d {
			u[x] += right.At(x, l) * along / sv
		}
	}
	out := make([]float64, d)
	n := math.Sqrt(dotProduct(u, u))
	if n == 0 {
		return out
	}
	length := 0.0
	for _, r := range g {
		length += dotProduct(r, u) / n
	}
	for x := range d {
		out[x] = length * u[x] / n
	}
	return out
}

// TestConFIGAgainstSVD checks Aggregate against configBySVD on random
// sets of K = 2..6 gradients in 3 to 8 dimensions, norms spread over
// 10⁴, with more tasks than dimensions among them (dependent gradients,
// a least-squares u), and with a gradient repeated, reversed and zeroed.
// Tolerance: 1e-10 times the sum of the gradient norms, the scale of d.
func TestConFIGAgainstSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	var sets [][][]float64
	for k := 2; k <= 6; k++ {
		for dim := 3; dim <= 8; dim++ {
			g := randomGradients(rng, k, dim)
			spreadNorms(rng, g, 0, 4)
			sets = append(sets, g)
		}
	}
	base := randomGradients(rng, 3, 5)
	repeated := append(append([][]float64(nil), base...), base[1])
	reversed := append(append([][]float64(nil), base...), negated(base[:1])[0])
	zeroed := append(append([][]float64(nil), base...), make([]float64, 5))
	sets = append(sets, repeated, reversed, zeroed)
	for n, g := range sets {
		scale := 0.0
		for _, r := range g {
			scale += math.Sqrt(dotProduct(r, r))
		}
		want := configBySVD(t, g)
		if got := aggregateOrFail(t, &ConFIG{}, g, Step{}); !closeTo(got, want, 1e-10*scale) {
			t.Errorf("set %d (K = %d, d = %d): %v, by SVD %v", n, len(g), len(g[0]), got, want)
		}
	}
}

// TestConFIGEqualAngles checks the property that defines the method:
// for independent gradients (K ≤ d, random), d makes the same positive
// cosine with every task's gradient, within 1e-12; and its direction
// does not change when one gradient is made 10⁴ times longer (the
// direction depends on the unit gradients alone), within 1e-12.
func TestConFIGEqualAngles(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	for k := 2; k <= 8; k++ {
		g := randomGradients(rng, k, 8)
		d := aggregateOrFail(t, &ConFIG{}, g, Step{})
		nd := math.Sqrt(dotProduct(d, d))
		first := dotProduct(d, g[0]) / (nd * math.Sqrt(dotProduct(g[0], g[0])))
		if first <= 0 {
			t.Errorf("K = %d: cosine %v with task 0, want > 0", k, first)
		}
		for i := 1; i < k; i++ {
			if cos := dotProduct(d, g[i]) / (nd * math.Sqrt(dotProduct(g[i], g[i]))); math.Abs(cos-first) > 1e-12 {
				t.Errorf("K = %d: cosine %v with task %d, %v with task 0", k, cos, i, first)
			}
		}
		long := append([][]float64(nil), g...)
		long[0] = make([]float64, len(g[0]))
		for x, v := range g[0] {
			long[0][x] = 1e4 * v
		}
		dl := aggregateOrFail(t, &ConFIG{}, long, Step{})
		nl := math.Sqrt(dotProduct(dl, dl))
		for x := range d {
			if math.Abs(dl[x]/nl-d[x]/nd) > 1e-12 {
				t.Errorf("K = %d: direction %v after lengthening task 0, %v before", k, dl[x]/nl, d[x]/nd)
				break
			}
		}
	}
}
