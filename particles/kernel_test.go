package particles

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// The repulsion of RBF.Evaluate is −∇_{x_m} Σ_a k(x_m, x_a), checked by
// central differences (h 1e-5) of rbf with the bandwidth held fixed;
// tolerance 1e-8 (the difference quotient's error is O(h²)).
func TestEvaluateRepulsionMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	m, d := 4, 6
	x := randomVectors(rng, m, d, 1)
	const sigma = 1.3
	var k Kernel
	RBF{Bandwidth: sigma}.Evaluate(&k, x)
	if k.Sigma != sigma {
		t.Errorf("σ = %v, want %v", k.Sigma, sigma)
	}
	for mm := range m {
		sum := func(v []float64) float64 {
			s := 0.0
			for a := range m {
				if a != mm {
					s += rbf(v, x[a], sigma)
				}
			}
			return s
		}
		for l := range d {
			want := -partial(sum, x[mm], l, 1e-5)
			if got := k.Repulsion[mm][l]; math.Abs(got-want) > 1e-8 {
				t.Errorf("particle %d, coordinate %d: repulsion %v, finite differences %v", mm, l, got, want)
			}
		}
		for a := range m {
			if want := rbf(x[mm], x[a], sigma); math.Abs(k.K[mm][a]-want) > 1e-15 {
				t.Errorf("K[%d][%d] = %v, want %v", mm, a, k.K[mm][a], want)
			}
		}
	}
}

// A kernel evaluated outside the rule on the positions themselves (f the
// identity) is the rule's own kernel: for the RBF kernel, which depends
// on θ_m − θ_a alone, −∇_{θ_m} Σ_a k(θ_m,θ_a) = Σ_a ∇_{θ_a} k(θ_a,θ_m).
// Every kernel rule must then give its own direction, to rounding (1e-12
// relative to the direction's largest entry).
func TestExternalKernelOnPositionsIsOwnKernel(t *testing.T) {
	rules := []struct {
		name string
		new  func() Rule
	}{
		{"svgd", func() Rule { return &SVGD{Repulsion: 0.7} }},
		{"moo-svgd", func() Rule { return &MOOSVGD{Repulsion: 0.7} }},
		{"mtsgd first term", func() Rule { return &MTSGD{Repulsion: 0.7, FirstTermOnly: true} }},
	}
	for _, tc := range rules {
		for seed := range uint64(10) {
			rng := rand.New(rand.NewPCG(seed, 17))
			m, k, d := 2+int(seed%5), 1+int(seed%3), 3+int(seed%7)
			e := randomEnsemble(rng, m, k, d)
			own := newVectors(m, d)
			if err := tc.new().Direction(own, e); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			e.Kernel = new(Kernel)
			RBF{}.Evaluate(e.Kernel, e.Theta)
			ext := newVectors(m, d)
			if err := tc.new().Direction(ext, e); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			scale := 0.0
			for a := range m {
				for i := range d {
					scale = math.Max(scale, math.Abs(own[a][i]))
				}
			}
			for a := range m {
				for i := range d {
					if math.Abs(own[a][i]-ext[a][i]) > 1e-12*scale {
						t.Fatalf("%s, seed %d: particle %d, coordinate %d: %v with the external kernel, %v with the rule's own", tc.name, seed, a, i, ext[a][i], own[a][i])
					}
				}
			}
		}
	}
}

// An external kernel reaches the direction: the smoothing uses its K and
// the repulsive term its Repulsion, whatever the positions are. The
// reference is the definition φ_m = (1/M) Σ_a [K_am s_a + ρ R_m] for SVGD
// with one target, written out here.
func TestExternalKernelIsUsed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m, d := 3, 4
	e := randomEnsemble(rng, m, 1, d)
	kern := &Kernel{
		K:         [][]float64{{1, 0.5, 0.1}, {0.5, 1, 0.3}, {0.1, 0.3, 1}},
		Repulsion: randomVectors(rng, m, d, 1),
	}
	e.Kernel = kern
	const rho = 0.4
	dst := newVectors(m, d)
	if err := (&SVGD{Repulsion: rho}).Direction(dst, e); err != nil {
		t.Fatal(err)
	}
	for mm := range m {
		for i := range d {
			want := rho * kern.Repulsion[mm][i]
			for a := range m {
				want += kern.K[a][mm] * e.Scores[0][a][i]
			}
			want /= float64(m)
			if math.Abs(dst[mm][i]-want) > 1e-14 {
				t.Errorf("particle %d, coordinate %d: %v, want %v", mm, i, dst[mm][i], want)
			}
		}
	}
}

func TestExternalKernelRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	e := randomEnsemble(rng, 3, 2, 4)
	e.Kernel = new(Kernel)
	RBF{}.Evaluate(e.Kernel, e.Theta)
	dst := newVectors(3, 4)
	err := (&MTSGD{Repulsion: 1}).Direction(dst, e)
	if err == nil || !strings.Contains(err.Error(), "four-term U") {
		t.Errorf("full U with an external kernel: error %v, want one about the four-term U", err)
	}
	bad := []struct {
		name string
		k    *Kernel
	}{
		{"two rows", &Kernel{K: e.Kernel.K[:2], Repulsion: e.Kernel.Repulsion}},
		{"short repulsion", &Kernel{K: e.Kernel.K, Repulsion: [][]float64{{1}, {1}, {1}}}},
		{"NaN", &Kernel{K: [][]float64{{1, math.NaN(), 0}, {0, 1, 0}, {0, 0, 1}}, Repulsion: e.Kernel.Repulsion}},
	}
	for _, tc := range bad {
		e.Kernel = tc.k
		if err := (&SVGD{}).Direction(dst, e); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func newVectors(n, d int) [][]float64 {
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, d)
	}
	return v
}

// A network's squared distances, its pairs summed side by side on
// several goroutines, are each the one sum in coordinate order, bit for
// bit (σ² and the kernel follow from them).
func TestLongDistancesInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	rng := rand.New(rand.NewPCG(12, 4))
	m, d := 5, 8*blockSize+3
	theta := make([][]float64, m)
	for a := range theta {
		theta[a] = make([]float64, d)
		for i := range theta[a] {
			theta[a][i] = rng.NormFloat64() * math.Pow(2, float64(rng.IntN(20)-10))
		}
	}
	var km kernelMatrix
	RBF{}.evaluate(&km, theta)
	for a := range m {
		for b := range m {
			want := 0.0
			for i := range d {
				diff := theta[a][i] - theta[b][i]
				want += diff * diff
			}
			if a == b {
				want = 0
			}
			if math.Float64bits(km.d2[a][b]) != math.Float64bits(want) {
				t.Fatalf("d2[%d][%d] = %v, want %v", a, b, km.d2[a][b], want)
			}
		}
	}
}
