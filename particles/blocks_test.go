package particles

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// On long vectors MT-SGD streams over blocks of coordinates on several
// goroutines. U and the direction are checked against the closed forms
// of the MTSGD doc evaluated pair by pair over whole vectors, with the
// kernel's gradient ∇_{θ_a}k(θ_a,θ_m) = −k·(θ_a − θ_m)/σ² written out, to
// 1e-9 relative (the sums of 70,001 products run in other orders); and a
// run on one goroutine gives the same bits as one on four.
func TestMTSGDLongVectors(t *testing.T) {
	const m, k, d = 4, 3, 70_001 // 35 blocks, the last one short
	rng := rand.New(rand.NewPCG(21, 1))
	e := randomEnsemble(rng, m, k, d)
	for _, first := range []bool{false, true} {
		r := &MTSGD{Repulsion: 0.5, FirstTermOnly: first}
		prev := runtime.GOMAXPROCS(4)
		u, dir := mtsgdU(t, r, e)
		runtime.GOMAXPROCS(1)
		u1, dir1 := mtsgdU(t, &MTSGD{Repulsion: 0.5, FirstTermOnly: first}, e)
		runtime.GOMAXPROCS(prev)
		if !slices.Equal(u, u1) {
			t.Errorf("first term only %v: U on 4 goroutines %v, on 1 %v", first, u, u1)
		}
		for a := range dir {
			if !slices.Equal(dir[a], dir1[a]) {
				t.Errorf("first term only %v: particle %d's direction differs between 4 goroutines and 1", first, a)
			}
		}

		sigma, rho, w := r.Diagnostics().Sigma, r.Repulsion, r.Diagnostics().Weights
		s2 := sigma * sigma
		for i := range k {
			for j := range k {
				want := 0.0
				for a := range m {
					for b := range m {
						kab := rbf(e.Theta[a], e.Theta[b], sigma)
						delta := make([]float64, d)
						for l := range d {
							delta[l] = e.Theta[a][l] - e.Theta[b][l]
						}
						term := dot(e.Scores[i][a], e.Scores[j][b])
						if !first {
							term += rho / s2 * (dot(e.Scores[i][a], delta) - dot(e.Scores[j][b], delta))
							term += rho * rho * (float64(d)/s2 - dot(delta, delta)/(s2*s2))
						}
						want += kab * term
					}
				}
				want /= m * m
				if got := u[i*k+j]; math.Abs(got-want) > 1e-9*math.Abs(want) {
					t.Errorf("first term only %v: U[%d][%d] = %.12g, closed form %.12g", first, i, j, got, want)
				}
			}
		}
		for b := range m {
			for _, l := range []int{0, 2047, 2048, 40_000, d - 1} {
				want := 0.0
				for a := range m {
					kab := rbf(e.Theta[a], e.Theta[b], sigma)
					for i := range k {
						want += w[i] * kab * e.Scores[i][a][l]
					}
					want += rho * -kab * (e.Theta[a][l] - e.Theta[b][l]) / s2
				}
				want /= m
				if got := dir[b][l]; math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
					t.Errorf("first term only %v: particle %d coordinate %d: %.12g, definition %.12g", first, b, l, got, want)
				}
			}
		}
	}
}

// MT-SGD checks the scores for NaN and Inf as it copies their blocks
// (not in a pass of its own): a score not finite deep in a long vector,
// in a block run on another goroutine, is reported by target and
// particle, and the destination is left as it was.
func TestMTSGDLongVectorsNotFinite(t *testing.T) {
	const m, k, d = 4, 3, 70_001
	e := randomEnsemble(rand.New(rand.NewPCG(22, 1)), m, k, d)
	for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
		e.Scores[1][2][50_000] = bad
		dst := make([][]float64, m)
		for a := range dst {
			dst[a] = slices.Repeat([]float64{7}, d)
		}
		prev := runtime.GOMAXPROCS(4)
		err := (&MTSGD{Repulsion: 0.5}).Direction(dst, e)
		runtime.GOMAXPROCS(prev)
		if err == nil || err.Error() != "particles: score of target 1 at particle 2 is not finite" {
			t.Errorf("score %v: error %v, want target 1 at particle 2 named", bad, err)
		}
		for a := range dst {
			if slices.ContainsFunc(dst[a], func(x float64) bool { return x != 7 }) {
				t.Errorf("score %v: particle %d's destination was written", bad, a)
			}
		}
	}
}

// The two ways MT-SGD forms U's sums on blocks, by loops that smooth the
// scores (innerProducts) and by each block's Gram matrix (gramProducts),
// agree to 1e-12 relative on long vectors, with the four terms and the
// first only.
func TestMTSGDProductsMatchLoops(t *testing.T) {
	const m, k, d = 3, 4, 10_001
	e := randomEnsemble(rand.New(rand.NewPCG(23, 1)), m, k, d)
	for _, first := range []bool{false, true} {
		loops, gram := &MTSGD{FirstTermOnly: first}, &MTSGD{FirstTermOnly: first}
		km := &kernelMatrix{}
		RBF{}.compute(km, e.Theta)
		loops.alloc(k)
		gram.alloc(k)
		want := slices.Clone(loops.innerProducts(e, km, k, m, d))
		got, finite := gram.gramProducts(e, km, k, m, d)
		if !finite {
			t.Fatal("finite scores reported as not finite")
		}
		for x := range want {
			if j := x % k; j < x/k {
				continue // the lower triangle is not set
			}
			if math.Abs(got[x]-want[x]) > 1e-12*math.Abs(want[x]) {
				t.Errorf("first term only %v: a[%d] = %.15g by products, %.15g by loops", first, x, got[x], want[x])
			}
		}
		for i := range k {
			if math.Abs(gram.r[i]-loops.r[i]) > 1e-12*(math.Abs(loops.r[i])+1e-300) {
				t.Errorf("first term only %v: r[%d] = %.15g by products, %.15g by loops", first, i, gram.r[i], loops.r[i])
			}
		}
	}
}
