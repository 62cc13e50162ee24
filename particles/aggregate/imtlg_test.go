package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestIMTLGTwoTasksClosedForm checks K = 2 in 2-D against the closed
// form α₂ = g₁·(u₁ − u₂) / ((g₁ − g₂)·(u₁ − u₂)), α₁ = 1 − α₂, worked out
// by hand. Tolerance: 1e-15 relative to the largest gradient entry, a
// few roundings, divided by ‖u₁ − u₂‖² for the nearly collinear pair
// (u₁ − u₂ has entries of order ε² = 10⁻⁶ held to 10⁻¹⁶ absolutely).
func TestIMTLGTwoTasksClosedForm(t *testing.T) {
	const eps = 1e-3
	a2 := 1 / (1 + math.Sqrt(1+eps*eps))
	tests := []struct {
		name string
		g    [][]float64
		want []float64
		cond float64 // 1/‖u₁ − u₂‖², to within a factor 4
	}{
		// u₁ − u₂ = (1, −1), g₁·(u₁ − u₂) = 1, (g₁ − g₂)·(u₁ − u₂) = (1, −2)·(1, −1) = 3:
		// α = (⅔, ⅓), d = (⅔, ⅔); d·u₁ = d·u₂ = ⅔.
		{"orthogonal", [][]float64{{1, 0}, {0, 2}}, []float64{2.0 / 3, 2.0 / 3}, 1},
		// As above with ‖g₂‖ = 2·10⁴: (g₁ − g₂)·(u₁ − u₂) = 1 + 2·10⁴,
		// α₂ = 1/(1 + 2·10⁴), d = (2·10⁴/(1 + 2·10⁴))(1, 1).
		{"1e4 larger", [][]float64{{1, 0}, {0, 2e4}}, []float64{2e4 / (1 + 2e4), 2e4 / (1 + 2e4)}, 1},
		// g₁ = (1,0), g₂ = (−3,0): u₁ − u₂ = (2,0), g₁ − g₂ = (4,0):
		// α₂ = 2/8 = ¼, d = ¾(1,0) + ¼(−3,0) = 0.
		{"opposite", [][]float64{{1, 0}, {-3, 0}}, []float64{0, 0}, 1},
		// g₂ = (1, ε): d = (α₁ + α₂, α₂ε) = (1, α₂ε), d·u₁ = 1 and
		// d·u₂ = (1 + α₂ε²)/√(1 + ε²); equal when α₂ = (√(1+ε²) − 1)/ε²
		// = 1/(1 + √(1+ε²)), about ½.
		{"nearly collinear", [][]float64{{1, 0}, {1, eps}}, []float64{1, a2 * eps}, 1 / (eps * eps)},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &IMTLG{}, tt.g, Step{})
		if tol := 1e-15 * tt.cond * gradientScale(tt.g); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
	}
}

// TestIMTLGEqualProjections checks the defining property, d·uᵢ the same
// for every task, and that the weights sum to 1, on random sets
// (K = 2..6 in 8-D, norms spread over 10⁴) and on three gradients in
// 2-D (dependent, where the equal projections force d = 0). Tolerance:
// 1e-10 times the largest gradient norm, room for the rounding of DUᵀ's
// solve at the sets' condition numbers.
// For the independent sets it also compares the weights with torchjd's
// form M⁻¹n/(1ᵀM⁻¹n), nᵢ = ‖gᵢ‖, computed with gonum, to 1e-9.
func TestIMTLGEqualProjections(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	type set struct {
		g           [][]float64
		independent bool
	}
	sets := []set{{[][]float64{{1, 0}, {-1, 0.2}, {0.3, 1}}, false}}
	for k := 2; k <= 6; k++ {
		for range 4 {
			g := randomGradients(rng, k, 8)
			for i := range g {
				f := math.Pow(10, 4*rng.Float64())
				for x := range g[i] {
					g[i][x] *= f
				}
			}
			sets = append(sets, set{g, true})
		}
	}
	for n, s := range sets {
		g, k := s.g, len(s.g)
		var a IMTLG
		alpha := make([]float64, k)
		if err := a.weights(alpha, g, k, len(g[0])); err != nil {
			t.Errorf("set %d: %v", n, err)
			continue
		}
		d := aggregateOrFail(t, &IMTLG{}, g, Step{})
		sum, scale := 0.0, 0.0
		proj := make([]float64, k)
		for i, row := range g {
			sum += alpha[i]
			proj[i] = dotProduct(d, row) / math.Sqrt(dotProduct(row, row))
			scale = math.Max(scale, math.Sqrt(dotProduct(row, row)))
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("set %d: weights sum to %v", n, sum)
		}
		for i := range proj {
			if math.Abs(proj[i]-proj[0]) > 1e-10*scale {
				t.Errorf("set %d: projections %v not equal", n, proj)
				break
			}
		}
		if !s.independent {
			continue
		}
		gram := mat.NewSymDense(k, gramInto(nil, g))
		norms := mat.NewVecDense(k, nil)
		for i := range k {
			norms.SetVec(i, math.Sqrt(gram.At(i, i)))
		}
		var v mat.VecDense
		if err := v.SolveVec(gram, norms); err != nil {
			t.Fatalf("set %d: %v", n, err)
		}
		v.ScaleVec(1/mat.Sum(&v), &v)
		for i := range k {
			if math.Abs(v.AtVec(i)-alpha[i]) > 1e-9*math.Max(1, math.Abs(alpha[i])) {
				t.Errorf("set %d: weights %v, torchjd's form %v", n, alpha, mat.Formatted(v.T()))
				break
			}
		}
	}
}

// TestIMTLGDegenerateIsAnError checks the documented errors: a zero
// gradient has no unit vector, and identical gradients make DUᵀ singular;
// both wrap ErrUndefined, which training takes for a divergence.
func TestIMTLGDegenerateIsAnError(t *testing.T) {
	for name, g := range map[string][][]float64{
		"zero":              {{1, 0}, {0, 0}},
		"identical":         {{1, 2}, {1, 2}},
		"identical, scaled": {{1, 2}, {2, 4}, {0, 1}},
	} {
		if d, err := aggregateOrErr(&IMTLG{}, g); !errors.Is(err, ErrUndefined) {
			t.Errorf("%s: direction %v, error %v, want one wrapping ErrUndefined", name, d, err)
		}
	}
}
