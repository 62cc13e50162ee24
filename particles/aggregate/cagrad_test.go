package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// cagradObjective returns g_wᵀg₀ + c‖g₀‖‖g_w‖ computed from the vectors,
// not the Gram matrix: the reference the weights are checked against.
func cagradObjective(g [][]float64, w []float64, c float64) float64 {
	d := len(g[0])
	g0, gw := make([]float64, d), make([]float64, d)
	for i, row := range g {
		for x, v := range row {
			g0[x] += v / float64(len(g))
			gw[x] += w[i] * v
		}
	}
	lin, n0, nw := 0.0, 0.0, 0.0
	for x := range g0 {
		lin += gw[x] * g0[x]
		n0 += g0[x] * g0[x]
		nw += gw[x] * gw[x]
	}
	return lin + c*math.Sqrt(n0)*math.Sqrt(nw)
}

// TestCAGradTwoTasksClosedForm checks CAGrad for K = 2 in 2-D against
// minimisers worked out by hand, writing w = (w₁, 1 − w₁) and
// F(w₁) = g_wᵀg₀ + c‖g₀‖‖g_w‖. Tolerance: 1e-9 relative to the largest
// gradient entry; the weights are certified to 1e-11 on F and F is
// quadratic near an interior minimum, so w₁ is good to about √1e-11/curvature.
func TestCAGradTwoTasksClosedForm(t *testing.T) {
	// (1,0), (−1,1), c = 0.8: g₀ = (0,½), c‖g₀‖ = 0.4, g_w = (2w₁−1, 1−w₁),
	// F = ½(1−w₁) + 0.4√(5w₁² − 6w₁ + 2). F' = 0 gives
	// 0.8(5w₁ − 3) = √(5w₁² − 6w₁ + 2) with 5w₁ > 3, squared
	// 11w₁² − 13.2w₁ + 3.76 = 0, w₁ = (13.2 + √8.8)/22 ≈ 0.7348.
	w1 := (13.2 + math.Sqrt(8.8)) / 22
	gw := []float64{2*w1 - 1, 1 - w1}
	n := math.Hypot(gw[0], gw[1])
	interior := []float64{0.4 * gw[0] / n, 0.5 + 0.4*gw[1]/n}

	tests := []struct {
		name string
		c    float64
		g    [][]float64
		want []float64
	}{
		// g₀ = (½,½); g_wᵀg₀ = ½ for every w and ‖g_w‖ is least at w = (½,½),
		// so g_w* = g₀ and d = g₀ + c g₀ = 1.4(½,½).
		{"orthogonal", 0.4, [][]float64{{1, 0}, {0, 1}}, []float64{0.7, 0.7}},
		// (1,0), (−1,1), c = 0.4: as above with c‖g₀‖ = 0.2,
		// F'(w₁) = −½ + 0.2(5w₁ − 3)/√(5w₁² − 6w₁ + 2) and F'(1) = −0.1 < 0:
		// F is convex and decreasing on [0,1], w* = (1,0), g_w* = g₁,
		// d = (0,½) + 0.2(1,0) = (0.2, 0.5).
		{"conflicting, vertex", 0.4, [][]float64{{1, 0}, {-1, 1}}, []float64{0.2, 0.5}},
		{"conflicting, interior", 0.8, [][]float64{{1, 0}, {-1, 1}}, interior},
		// g_w = g for every w: d = g + c‖g‖ g/‖g‖ = 1.4g.
		{"identical", 0.4, [][]float64{{1, 2}, {1, 2}}, []float64{1.4, 2.8}},
		// g₀ = 0, so φ = 0 and d = g₀ = 0.
		{"opposite", 0.4, [][]float64{{1, 0}, {-1, 0}}, []float64{0, 0}},
		// (1,0), (1,10⁻³): g_w = (1, 10⁻³w₂), g₀ = (1, 5·10⁻⁴); both terms of F
		// grow with w₂, so w* = (1,0), g_w* = g₁ and
		// d = g₀ + 0.4‖g₀‖(1,0) = (1 + 0.4√(1 + 2.5·10⁻⁷), 5·10⁻⁴).
		{"nearly collinear", 0.4, [][]float64{{1, 0}, {1, 1e-3}},
			[]float64{1 + 0.4*math.Sqrt(1+2.5e-7), 5e-4}},
		// The conflicting case with g₂ scaled by 10⁴ and c = 0: the mean,
		// (½(1 − 10⁴), ½·10⁴). (TestCAGradWeightsAgainstGrid covers c > 0.)
		{"1e4 larger, c = 0", -1, [][]float64{{1, 0}, {-1e4, 1e4}}, []float64{0.5 * (1 - 1e4), 0.5e4}},
	}
	for _, tt := range tests {
		got := aggregateOrFail(t, &CAGrad{C: tt.c}, tt.g, Step{})
		if tol := 1e-9 * gradientScale(tt.g); !closeTo(got, tt.want, tol) {
			t.Errorf("%s: %v, want %v (tolerance %.3g)", tt.name, got, tt.want, tol)
		}
	}
}

// TestCAGradZeroCIsTheMean checks that c = 0 (C < 0) gives the mean
// gradient exactly.
func TestCAGradZeroCIsTheMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for range 20 {
		g := randomGradients(rng, 4, 6)
		mean := make([]float64, 6)
		for _, row := range g {
			for x, v := range row {
				mean[x] += v / 4
			}
		}
		got := aggregateOrFail(t, &CAGrad{C: -1}, g, Step{})
		if !closeTo(got, mean, 1e-15) {
			t.Errorf("%v, want the mean %v", got, mean)
		}
	}
}

// TestCAGradWeightsAgainstGrid compares the weights with brute force
// over a grid on the simplex (step 10⁻⁵ for K = 2, 1/800 for K = 3): the
// objective at w*, evaluated from the vectors, must not exceed the grid's
// least value by more than 1e-12 of the largest squared gradient norm
// (a grid point is feasible, so w* can only be better), and must be
// within the grid's resolution of it (L·h, L ≤ (1+c)·max‖gᵢ‖²·√K a
// bound on F's gradient).
func TestCAGradWeightsAgainstGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sets := map[string][][]float64{
		"random K=2":       randomGradients(rng, 2, 4),
		"random K=3":       randomGradients(rng, 3, 4),
		"conflicting K=3":  {{1, 0, 0.1}, {-0.8, 0.6, 0}, {-0.2, -1, 0.3}},
		"1e4 larger K=2":   {{1, 0}, {-1e4, 1e4}},
		"1e4 larger K=3":   {{1, 0.5, 0}, {-1e4, 1e4, 0}, {0, -0.3, 1}},
		"nearly collinear": {{1, 0, 0}, {1, 1e-3, 0}, {-1, 1e-3, 1e-3}},
		// A nearly opposite pair and a third in their plane, on which the
		// barrier stalls at c = 2 and the edge of its two largest weights
		// certifies (polishPair); a set of TestDegenerateSetsEnd's family.
		"stalled K=3": {{1.120613573129423, -0.8607807916377965}, {-1.2072652322111022, 0.9278708263888766}, {1.9495949773324737, -0.8039630317767422}},
	}
	for name, g := range sets {
		for _, c := range []float64{0.4, 0.8, 2} {
			a := &CAGrad{C: c}
			if _, err := aggregateOrErr(a, g); err != nil {
				t.Errorf("%s, c = %g: %v", name, c, err)
				continue
			}
			k := len(g)
			scale := 0.0
			for _, row := range g {
				scale = math.Max(scale, dotProduct(row, row))
			}
			fStar := cagradObjective(g, a.w, c)
			best, h := math.Inf(1), 0.0
			if k == 2 {
				h = 1e-5
				for i := 0; i <= 100000; i++ {
					w1 := float64(i) * h
					best = math.Min(best, cagradObjective(g, []float64{w1, 1 - w1}, c))
				}
			} else {
				const n = 800
				h = 1.0 / n
				for i := 0; i <= n; i++ {
					for j := 0; i+j <= n; j++ {
						w := []float64{float64(i) * h, float64(j) * h, float64(n-i-j) * h}
						best = math.Min(best, cagradObjective(g, w, c))
					}
				}
			}
			if fStar > best+1e-12*scale {
				t.Errorf("%s, c = %g: F(w*) = %.15g above the grid's least %.15g (w* = %v)", name, c, fStar, best, a.w)
			}
			if lip := (1 + c) * scale * math.Sqrt(float64(k)); best-fStar > lip*h {
				t.Errorf("%s, c = %g: F(w*) = %.15g more than L·h = %.3g below the grid's least %.15g", name, c, fStar, lip*h, best)
			}
		}
	}
}

// TestCAGradMaximisesWorstImprovement checks the primal problem whose
// dual gives CAGrad's weights: d maximises minᵢ gᵢ·d over the ball
// ‖d − g₀‖ ≤ c‖g₀‖. 20,000 points drawn in the ball (surface included)
// must none beat d by more than 1e-9 of the largest squared gradient norm.
func TestCAGradMaximisesWorstImprovement(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	worst := func(g [][]float64, d []float64) float64 {
		m := math.Inf(1)
		for _, row := range g {
			m = math.Min(m, dotProduct(row, d))
		}
		return m
	}
	for trial := range 10 {
		g := randomGradients(rng, 3, 3)
		const c = 0.4
		d, err := aggregateOrErr(&CAGrad{}, g)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		g0 := make([]float64, 3)
		for _, row := range g {
			for x, v := range row {
				g0[x] += v / 3
			}
		}
		radius := c * math.Sqrt(dotProduct(g0, g0))
		if dist := math.Sqrt((d[0]-g0[0])*(d[0]-g0[0]) + (d[1]-g0[1])*(d[1]-g0[1]) + (d[2]-g0[2])*(d[2]-g0[2])); math.Abs(dist-radius) > 1e-12*(1+radius) {
			t.Errorf("trial %d: ‖d − g₀‖ = %v, want the radius %v", trial, dist, radius)
		}
		scale := 0.0
		for _, row := range g {
			scale = math.Max(scale, dotProduct(row, row))
		}
		best := worst(g, d)
		for i := range 20000 {
			u := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			f := radius / math.Sqrt(dotProduct(u, u))
			if i%2 == 0 {
				f *= math.Cbrt(rng.Float64())
			}
			p := []float64{g0[0] + f*u[0], g0[1] + f*u[1], g0[2] + f*u[2]}
			if v := worst(g, p); v > best+1e-9*scale {
				t.Errorf("trial %d: %v has worst improvement %.12g above d's %.12g", trial, p, v, best)
				break
			}
		}
	}
}

// TestCAGradUndefinedDirectionIsTheMean checks the cases where the
// minimising combination is 0 and g_w*/‖g_w*‖ is undefined: a zero
// gradient (F = 0 at the zero vertex, and g_wᵀg₀ + c‖g₀‖‖g_w‖ ≥ 0 along
// (1,0)), and two opposite gradients with a third orthogonal one (every
// combination points into the half-plane of g₀ = (0, ⅓)). d is then the
// mean gradient g₀ (hand-computed: (½, 0) and (0, ⅓)), exactly.
func TestCAGradUndefinedDirectionIsTheMean(t *testing.T) {
	for name, c := range map[string]struct {
		g    [][]float64
		want []float64
	}{
		"zero":             {[][]float64{{1, 0}, {0, 0}}, []float64{0.5, 0}},
		"opposite + third": {[][]float64{{1, 0}, {-1, 0}, {0, 1}}, []float64{0, 1.0 / 3}},
	} {
		d, err := aggregateOrErr(&CAGrad{}, c.g)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range d {
			if d[i] != c.want[i] {
				t.Errorf("%s: direction %v, want the mean %v", name, d, c.want)
				break
			}
		}
	}
}
