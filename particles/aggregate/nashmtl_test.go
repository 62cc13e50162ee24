package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// nashTwoTasks is the K = 2 solution worked out by hand: with
// M = [[a, b], [b, c]] the equations α₁(aα₁ + bα₂) = 1 and
// α₂(bα₁ + cα₂) = 1 subtract to aα₁² = cα₂², so α₁ = α₂√(c/a), and the
// second becomes α₂²(c + b√(c/a)) = 1.
func nashTwoTasks(g [][]float64) []float64 {
	a, b, c := dotProduct(g[0], g[0]), dotProduct(g[0], g[1]), dotProduct(g[1], g[1])
	a2 := 1 / math.Sqrt(c+b*math.Sqrt(c/a))
	a1 := a2 * math.Sqrt(c/a)
	d := make([]float64, len(g[0]))
	for x := range d {
		d[x] = a1*g[0][x] + a2*g[1][x]
	}
	return d
}

// TestNashMTLTwoTasksClosedForm checks K = 2 in 2-D against the
// solutions worked out by hand. Tolerance: 1e-11 relative to the
// direction's norm √2 (the weights' residual is held to 1e-12).
func TestNashMTLTwoTasksClosedForm(t *testing.T) {
	s2 := math.Sqrt(2 + math.Sqrt2)
	tests := []struct {
		name string
		g    [][]float64
		want []float64
	}{
		// M = diag(1, 4): α₁² = 1, 4α₂² = 1, α = (1, ½), d = (1, 1).
		{"orthogonal", [][]float64{{1, 0}, {0, 2}}, []float64{1, 1}},
		// M = [[1,1],[1,2]]: α₁ = √2·α₂, α₂²(2 + √2) = 1,
		// d = (α₁ + α₂, α₂) = ((1 + √2)/√(2+√2), 1/√(2+√2)); ‖d‖² = 2.
		{"45 degrees", [][]float64{{1, 0}, {1, 1}}, []float64{(1 + math.Sqrt2) / s2, 1 / s2}},
		// M = 5·[[1,1],[1,1]]: α₁ = α₂ = a with 2a²·5 = 1, d = 2a·g = √2·g/√5.
		{"identical", [][]float64{{1, 2}, {1, 2}}, []float64{math.Sqrt2 / math.Sqrt(5), 2 * math.Sqrt2 / math.Sqrt(5)}},
		// M = [[1, 1], [1, 1 + 10⁻⁶]]: the formula above.
		{"nearly collinear", [][]float64{{1, 0}, {1, 1e-3}}, nashTwoTasks([][]float64{{1, 0}, {1, 1e-3}})},
		// M = diag(1, 4·10⁸): α = (1, 1/(2·10⁴)), d = (1, 1).
		{"1e4 larger", [][]float64{{1, 0}, {0, 2e4}}, []float64{1, 1}},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &NashMTL{}, tt.g, Step{})
		if !closeTo(got, tt.want, 1e-11*math.Sqrt2) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	// The formula itself on the 45-degree case, so that the nearly
	// collinear reference is the one checked by hand.
	if !closeTo(nashTwoTasks([][]float64{{1, 0}, {1, 1}}), []float64{(1 + math.Sqrt2) / s2, 1 / s2}, 1e-15) {
		t.Error("nashTwoTasks disagrees with the hand-worked 45-degree case")
	}
}

// TestNashMTLWeightsSolveTheBargaining checks on random sets, K = 1..8,
// gradient norms spread over 10⁴, that α > 0 solves (GGᵀα)ᵢ = 1/αᵢ:
// |αᵢ(GGᵀα)ᵢ − 1| ≤ 1e-9 with GGᵀ recomputed from the vectors, and that
// the direction is Gᵀα with ‖d‖² = K to 1e-9·K.
func TestNashMTLWeightsSolveTheBargaining(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for k := 1; k <= 8; k++ {
		for trial := range 5 {
			g := randomGradients(rng, k, 10)
			for i := range g {
				f := math.Pow(10, 4*rng.Float64())
				for x := range g[i] {
					g[i][x] *= f
				}
			}
			if trial == 0 && k > 1 { // one 10⁴ times larger than the rest
				for x := range g[0] {
					g[0][x] *= 1e4
				}
			}
			alpha := make([]float64, k)
			if err := nashWeights(alpha, gramInto(nil, g), k, &nashNewton{}, &minnorm.Solver{}, make([]float64, k)); err != nil {
				t.Errorf("K = %d, trial %d: %v", k, trial, err)
				continue
			}
			gta := make([]float64, 10)
			for i, row := range g {
				for x, v := range row {
					gta[x] += alpha[i] * v
				}
			}
			for i, row := range g {
				if alpha[i] <= 0 {
					t.Errorf("K = %d, trial %d: α%d = %v", k, trial, i, alpha[i])
				}
				if r := alpha[i]*dotProduct(row, gta) - 1; math.Abs(r) > 1e-9 {
					t.Errorf("K = %d, trial %d: α%d(GGᵀα)%d − 1 = %.3g", k, trial, i, i, r)
				}
			}
			d := aggregateOrFail(t, &NashMTL{}, g, Step{})
			if n2 := dotProduct(d, d); math.Abs(n2-float64(k)) > 1e-9*float64(k) {
				t.Errorf("K = %d, trial %d: ‖d‖² = %v, want %d", k, trial, n2, k)
			}
			if !closeTo(d, gta, 1e-12*maxAbs(gta)) {
				t.Errorf("K = %d, trial %d: d = %v, Gᵀα = %v", k, trial, d, gta)
			}
		}
	}
}

// TestNashMTLZeroInHullIsStationary checks the sets with 0 in the
// convex hull of the gradients, where αᵢ(GGᵀα)ᵢ = 1 has no positive
// solution and the direction is 0 (Pareto-stationary), exactly.
func TestNashMTLZeroInHullIsStationary(t *testing.T) {
	for name, g := range map[string][][]float64{
		"opposite":            {{1, 0}, {-1, 0}},
		"opposite, 1e4":       {{1, 0}, {-1e4, 0}},
		"zero":                {{1, 0}, {0, 0}},
		"all zero":            {{0, 0}, {0, 0}},
		"0 inside a triangle": {{1, 0}, {-1, 1}, {-1, -1}},
	} {
		d, err := aggregateOrErr(&NashMTL{}, g)
		if err != nil || d[0] != 0 || d[1] != 0 {
			t.Errorf("%s: direction %v, error %v; want 0", name, d, err)
		}
	}
}
