package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// alignedTwoByTwo is Aligned-MTL for two gradients spanning the plane,
// worked out by hand. For a square invertible G, B = σ_min(GGᵀ)^(−1/2)
// and BG = σ_min·Q, Q the orthogonal factor of the polar decomposition
// G = (GGᵀ)^(1/2)Q; so d = (BG)ᵀ1 = σ_min(q₁ + q₂). For a 2×2
// A = [[a, b], [c, e]] with det A > 0, A + det(A)A⁻ᵀ = A + [[e, −c], [−b, a]]
// equals (σ₁ + σ₂)Q (write A = UΣVᵀ), so Q is that matrix normalised by
// the norm of its first row; and σ_min² is the smaller root of
// σ² − (a² + b² + c² + e²)σ + det² = 0, taken as det²/(larger root).
func alignedTwoByTwo(a, b, c, e float64) []float64 {
	q := [2][2]float64{{a + e, b - c}, {c - b, e + a}}
	n := math.Hypot(q[0][0], q[0][1])
	det := a*e - b*c
	f := a*a + b*b + c*c + e*e
	sigma2 := det * det / ((f + math.Sqrt(f*f-4*det*det)) / 2)
	s := math.Sqrt(sigma2)
	return []float64{s * (q[0][0] + q[1][0]) / n, s * (q[0][1] + q[1][1]) / n}
}

// TestAlignedMTLTwoTasksClosedForm checks K = 2 in 2-D against answers
// worked out by hand. Tolerance: 1e-14 relative to the largest
// gradient entry, and 1e-8 for the nearly collinear pair, whose least
// eigenvalue ε²/2 = 5·10⁻⁷ the eigensolver holds to about 2⁻⁵²·λ_max.
func TestAlignedMTLTwoTasksClosedForm(t *testing.T) {
	const eps = 1e-3
	tests := []struct {
		name string
		g    [][]float64
		want []float64
		tol  float64
	}{
		// GGᵀ = diag(1, 4): σ_min = 1, B = diag(1, ½), w = (1, ½), d = (1, 1).
		{"orthogonal", [][]float64{{1, 0}, {0, 2}}, []float64{1, 1}, 1e-14},
		// G = [[1,0],[1,1]]: Q = [[2,−1],[1,2]]/√5, σ_min = (√5 − 1)/2
		// (σ_min² = (3 − √5)/2), d = σ_min(3, 1)/√5.
		{"45 degrees", [][]float64{{1, 0}, {1, 1}},
			[]float64{(math.Sqrt(5) - 1) / 2 * 3 / math.Sqrt(5), (math.Sqrt(5) - 1) / 2 / math.Sqrt(5)}, 1e-14},
		{"nearly collinear", [][]float64{{1, 0}, {1, eps}}, alignedTwoByTwo(1, 0, 1, eps), 1e-8},
		// GGᵀ = 5·11ᵀ: rank 1, v = (1,1)/√2, σ_min = √10, B = vvᵀ, w = (1, 1), d = 2g.
		{"identical", [][]float64{{1, 2}, {1, 2}}, []float64{2, 4}, 1e-14},
		// GGᵀ = [[1,−3],[−3,9]]: rank 1, v = (1,−3)/√10, B = vvᵀ,
		// w = v(v·1) = (−0.2, 0.6), d = −0.2(1,0) + 0.6(−3,0) = (−2, 0): with one
		// direction the aligned gradients are the gradients themselves.
		{"opposite", [][]float64{{1, 0}, {-3, 0}}, []float64{-2, 0}, 1e-14},
		// GGᵀ = diag(1, 0): rank 1, B = diag(1, 0), d = g₁.
		{"zero", [][]float64{{1, 0}, {0, 0}}, []float64{1, 0}, 1e-14},
		// GGᵀ = diag(1, 4·10⁸): σ_min = 1, w = (1, 1/(2·10⁴)), d = (1, 1).
		{"1e4 larger", [][]float64{{1, 0}, {0, 2e4}}, []float64{1, 1}, 1e-14},
		{"all zero", [][]float64{{0, 0}, {0, 0}}, []float64{0, 0}, 0},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &AlignedMTL{}, tt.g, Step{})
		if tol := tt.tol * gradientScale(tt.g); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
	}
	// The hand formula reproduces the 45-degree case written out above.
	if !closeTo(alignedTwoByTwo(1, 0, 1, 1), []float64{(math.Sqrt(5) - 1) / 2 * 3 / math.Sqrt(5), (math.Sqrt(5) - 1) / 2 / math.Sqrt(5)}, 1e-15) {
		t.Error("alignedTwoByTwo disagrees with the 45-degree case")
	}
}

// TestAlignedMTLAlignsTheGradients checks the defining property on
// random sets of full rank (K = 2..6 in 8-D, norms spread over 10⁴) and
// of lower rank (four gradients in 2-D, one zero, one repeated): the
// aligned gradients BG have Gram matrix σ_min²·P with P the orthogonal
// projector onto the gradients' span in task space, P² = P with trace
// the rank (P = I at full rank: orthogonal rows of equal norm σ_min).
// σ_min and the rank come from gonum's SVD of G, independently of the
// eigendecomposition. Tolerance: 1e-12·K·σ_max·σ_min on the Gram
// matrix, the rounding of B (entries up to 1) times G (norm σ_max).
func TestAlignedMTLAlignsTheGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	var sets [][][]float64
	for k := 2; k <= 6; k++ {
		for range 3 {
			g := randomGradients(rng, k, 8)
			for i := range g {
				f := math.Pow(10, 4*rng.Float64())
				for x := range g[i] {
					g[i][x] *= f
				}
			}
			sets = append(sets, g)
		}
	}
	sets = append(sets,
		[][]float64{{1, 0.5}, {-1, 2}, {0.3, -1}, {2, 2}},
		[][]float64{{1, 0.5, 0}, {0, 0, 0}, {-1, 2, 1}},
		[][]float64{{1, 0.5, 0}, {1, 0.5, 0}, {-1, 2, 1}},
	)
	for n, g := range sets {
		k, d := len(g), len(g[0])
		gm := mat.NewDense(k, d, nil)
		for i, row := range g {
			gm.SetRow(i, row)
		}
		var svd mat.SVD
		if !svd.Factorize(gm, mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		sv := svd.Values(nil) // descending
		rank := 0
		for _, s := range sv {
			if s > sv[0]*1e-10 {
				rank++
			}
		}
		sMax, sMin := sv[0], sv[rank-1]

		b := make([]float64, k*k)
		if err := alignedMTLBalance(b, gramInto(nil, g), k); err != nil {
			t.Fatalf("set %d: %v", n, err)
		}
		var bg, gram, p, pp mat.Dense
		bg.Mul(mat.NewDense(k, k, b), gm)
		gram.Mul(&bg, bg.T())
		p.Scale(1/(sMin*sMin), &gram)
		pp.Mul(&p, &p)
		tol := 1e-12 * float64(k) * sMax / sMin // on P, that is on the Gram matrix over σ_min²
		if !mat.EqualApprox(&pp, &p, tol) {
			t.Errorf("set %d: P² ≠ P:\n%v", n, mat.Formatted(&p))
		}
		if tr := mat.Trace(&p); math.Abs(tr-float64(rank)) > tol*float64(k) {
			t.Errorf("set %d: trace P = %v, want the rank %d", n, tr, rank)
		}
		if rank == k && !mat.EqualApprox(&p, eye(k), tol) {
			t.Errorf("set %d: full rank but BG(BG)ᵀ/σ_min² =\n%v", n, mat.Formatted(&p))
		}
		// And d is the sum of the aligned gradients.
		dir := aggregateOrFail(t, &AlignedMTL{}, g, Step{})
		for x := range d {
			col := mat.Sum(bg.ColView(x))
			if math.Abs(dir[x]-col) > 1e-12*float64(k)*sMax {
				t.Errorf("set %d: d = %v is not the sum of BG's rows", n, dir)
				break
			}
		}
	}
}

// eye returns the n×n identity.
func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}
