package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func freshRLW() Aggregator { return RLW{} }

// TestRLWDrawsPinned pins the generator's first draws for two keys, the
// recorded output of rlwNormals: a change to it would make a resumed
// run draw other weights than the run it resumes.
func TestRLWDrawsPinned(t *testing.T) {
	for _, c := range []struct {
		seed            uint64
		particle, index int
		want            []float64
	}{
		{1, 0, 0, []float64{-0.88904699959858557, -0.20446492919781803, -0.89828026669600936, -0.49146197908102268, -2.030789010424622}},
		{1, 3, 1000, []float64{0.25710117991879244, -0.38502806449722488, -1.3478337876656619, 1.4804143459822048, 0.74484823783891252}},
	} {
		z := make([]float64, len(c.want))
		rlwNormals(z, c.seed, c.particle, c.index)
		for k := range z {
			if z[k] != c.want[k] {
				t.Errorf("seed %d, particle %d, index %d: z[%d] = %.17g, want %.17g", c.seed, c.particle, c.index, k, z[k], c.want[k])
			}
		}
	}
}

// TestRLWHandWorked checks the direction for 2 tasks against the
// two-task softmax written out, w₁ = 1/(1 + e^(z₂−z₁)), with z the
// pinned draws of (seed 1, particle 0, index 0).
func TestRLWHandWorked(t *testing.T) {
	z1, z2 := -0.88904699959858557, -0.20446492919781803
	w1 := 1 / (1 + math.Exp(z2-z1))
	w2 := 1 / (1 + math.Exp(z1-z2))
	d := make([]float64, 2)
	if err := (RLW{}).Aggregate(d, [][]float64{{3, 4}, {0, 1}}, Step{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "d₁", d[0], 3*w1, 1e-15)
	assertClose(t, "d₂", d[1], 4*w1+w2, 1e-15)
}

// TestRLWKeyed checks that the weights are a function of (Seed,
// Particle, Index) alone: the same key gives the same direction bit for
// bit whatever the losses, and changing any part of the key changes it.
func TestRLWKeyed(t *testing.T) {
	g := identityGradients(3)
	base := Step{Seed: 42, Particle: 1, Index: 7}
	want := make([]float64, 3)
	if err := (RLW{}).Aggregate(want, g, base); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 3)
	same := base
	same.Losses, same.StepsPerEpoch = []float64{5, -1, math.NaN()}, 3
	if err := (RLW{}).Aggregate(got, g, same); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
			t.Errorf("same key, other losses: w[%d] = %v, want %v", k, got[k], want[k])
		}
	}
	for name, s := range map[string]Step{
		"seed":     {Seed: 43, Particle: 1, Index: 7},
		"particle": {Seed: 42, Particle: 2, Index: 7},
		"index":    {Seed: 42, Particle: 1, Index: 8},
	} {
		if err := (RLW{}).Aggregate(got, g, s); err != nil {
			t.Fatal(err)
		}
		if got[0] == want[0] && got[1] == want[1] && got[2] == want[2] {
			t.Errorf("another %s drew the same weights %v", name, got)
		}
	}
}

// TestRLWNormalMoments checks rlwNormals' draws over 100 000 indices of
// 4 draws each against the standard normal: mean 0, variance 1, fourth
// moment 3, and no correlation between the two halves of a Box–Muller
// pair (z₀, z₁) or between pairs (z₁, z₂). Each tolerance is 4 standard
// errors of the estimate under the normal law: √(1/n) for the mean and
// a correlation, √(2/n) for the variance, √(96/n) for the fourth moment
// (Var z⁴ = 105 − 9).
func TestRLWNormalMoments(t *testing.T) {
	const n = 100000
	var sum, sum2, sum4, c01, c12 float64
	z := make([]float64, 4)
	for i := range n {
		rlwNormals(z, 2026, 5, i)
		for _, v := range z {
			sum += v
			sum2 += v * v
			sum4 += v * v * v * v
		}
		c01 += z[0] * z[1]
		c12 += z[1] * z[2]
	}
	m := 4.0 * n
	assertClose(t, "mean", sum/m, 0, 4*math.Sqrt(1/m))
	assertClose(t, "variance", sum2/m, 1, 4*math.Sqrt(2/m))
	assertClose(t, "fourth moment", sum4/m, 3, 4*math.Sqrt(96/m))
	assertClose(t, "E z₀z₁", c01/n, 0, 4*math.Sqrt(1.0/n))
	assertClose(t, "E z₁z₂", c12/n, 0, 4*math.Sqrt(1.0/n))
}

// weightMoments returns the mean and covariance of n weight vectors
// drawn by draw, and the standard error of each covariance entry,
// estimated from the sample as √(Var[(wᵢ−w̄ᵢ)(wⱼ−w̄ⱼ)]/n).
func weightMoments(k, n int, draw func(w []float64, i int)) (mean []float64, cov, se [][]float64) {
	ws := make([][]float64, n)
	mean = make([]float64, k)
	for i := range ws {
		ws[i] = make([]float64, k)
		draw(ws[i], i)
		for a, v := range ws[i] {
			mean[a] += v / float64(n)
		}
	}
	cov, se = make([][]float64, k), make([][]float64, k)
	for a := range k {
		cov[a], se[a] = make([]float64, k), make([]float64, k)
		for b := range k {
			var s, s2 float64
			for _, w := range ws {
				p := (w[a] - mean[a]) * (w[b] - mean[b])
				s += p
				s2 += p * p
			}
			c := s / float64(n)
			cov[a][b] = c
			se[a][b] = math.Sqrt((s2/float64(n) - c*c) / float64(n))
		}
	}
	return mean, cov, se
}

// TestRLWWeightMoments checks the weights RLW draws over 50 000 indices
// for K = 3: each weight's mean is 1/K (the tasks are exchangeable and
// the weights sum to 1), within 4 standard errors; their covariance
// matches the covariance of softmax(z) for z ~ N(0, I) estimated by
// Monte Carlo over 200 000 draws of math/rand/v2's normal generator (an
// independent reference), within 4 standard errors of the difference of
// the two estimates.
func TestRLWWeightMoments(t *testing.T) {
	const k = 3
	g := identityGradients(k)
	mean, cov, se := weightMoments(k, 50000, func(w []float64, i int) {
		if err := (RLW{}).Aggregate(w, g, Step{Seed: 9, Particle: 4, Index: i}); err != nil {
			t.Fatal(err)
		}
	})
	rng := rand.New(rand.NewPCG(1, 2))
	_, refCov, refSE := weightMoments(k, 200000, func(w []float64, _ int) {
		sum := 0.0
		for a := range w {
			w[a] = math.Exp(rng.NormFloat64())
			sum += w[a]
		}
		for a := range w {
			w[a] /= sum
		}
	})
	for a := range k {
		// Standard error of the mean: the standard deviation √cov[a][a]
		// over √n.
		assertClose(t, "mean weight", mean[a], 1.0/k, 4*math.Sqrt(cov[a][a]/50000))
		for b := range k {
			tol := 4 * math.Hypot(se[a][b], refSE[a][b])
			assertClose(t, "weight covariance", cov[a][b], refCov[a][b], tol)
		}
	}
}

func TestRLWErrors(t *testing.T) { checkInputErrors(t, freshRLW, false) }
func TestRLWNoNaN(t *testing.T)  { checkNoNaN(t, freshRLW) }
func TestRLWOdd(t *testing.T)    { checkOdd(t, freshRLW) }
