package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// needAVX512 skips a test of kernels.go's kernels on a processor without
// AVX-512, where every product runs in the BLAS.
func needAVX512(t *testing.T) {
	t.Helper()
	if !useAVX512 {
		t.Skip("no AVX-512: the products run in the BLAS")
	}
}

// randomMatrix is rows × ld values in [−1, 1).
// sumBound is γ_n = n·u/(1 − n·u), u the float32 unit roundoff: the
// relative bound on the error of a float32 sum of n terms in any order
// (Higham, Accuracy and Stability of Numerical Algorithms, §3.1), times
// the sum of their magnitudes.
func sumBound(n int) float64 {
	const u = 1.0 / (1 << 24)
	return float64(n) * u / (1 - float64(n)*u)
}

func randomMatrix(rng *rand.Rand, rows, ld int) []float32 {
	v := make([]float32, rows*ld)
	for i := range v {
		v[i] = 2*rng.Float32() - 1
	}
	return v
}

// productCase is a product C = A·B (rows) or A·Bᵀ (dots) with padded
// leading dimensions, so that the kernels must honour them.
type productCase struct {
	dots    bool
	m, n, k int
	addC    bool
}

func (pc productCase) String() string {
	return fmt.Sprintf("dots=%v m=%d n=%d k=%d addC=%v", pc.dots, pc.m, pc.n, pc.k, pc.addC)
}

// run computes the case's product with the kernels, returning A, B, C as
// given and C after, with their leading dimensions.
func (pc productCase) run(rng *rand.Rand) (a, b, c0, c []float32, lda, ldb, ldc int) {
	lda, ldc = pc.k+3, pc.n+1
	ldb = pc.n + 5
	brows := pc.k
	if pc.dots {
		ldb, brows = pc.k+7, pc.n
	}
	a, b = randomMatrix(rng, pc.m, lda), randomMatrix(rng, brows, ldb)
	c0 = randomMatrix(rng, pc.m, ldc)
	c = append([]float32(nil), c0...)
	if pc.dots {
		beta := float32(0)
		if pc.addC {
			beta = 1
		}
		dotsGemm(pc.m, pc.n, pc.k, a, lda, b, ldb, beta, c, ldc)
	} else {
		rowsGemm(pc.m, pc.n, pc.k, a, lda, b, ldb, pc.addC, c, ldc)
	}
	return a, b, c0, c, lda, ldb, ldc
}

// TestOwnKernelsMatchReference checks both kernels on 200 seeded random
// shapes, remainders of every tile and mask included, against the
// product summed in float64. The bound is the standard one for a sum of
// k products in floating point (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., eq. 3.5): |ĉ − c| ≤ γ_{k+1}·(Σ|a||b| +
// |c₀|), γ_j = j·u/(1 − j·u), u = 2⁻²⁴ for float32; the dots kernel's
// sums are shorter chains (k/16 plus a tree of 4), inside the same bound.
// Entries of C outside the product, in its padding, must be untouched.
func TestOwnKernelsMatchReference(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(7, 1))
	for trial := range 200 {
		pc := productCase{dots: trial%2 == 1, m: 1 + rng.IntN(40), n: 1 + rng.IntN(300), k: 1 + rng.IntN(300), addC: rng.IntN(2) == 0}
		if pc.dots {
			pc.n, pc.k = 1+rng.IntN(90), 1+rng.IntN(5000)
		}
		a, b, c0, c, lda, ldb, ldc := pc.run(rng)
		gamma := sumBound(pc.k + 1)
		for i := range pc.m {
			for j := range ldc {
				at := i*ldc + j
				if j >= pc.n {
					if c[at] != c0[at] {
						t.Fatalf("%v: padding C[%d,%d] changed", pc, i, j)
					}
					continue
				}
				sum, abs := 0.0, 0.0
				if pc.addC {
					sum, abs = float64(c0[at]), math.Abs(float64(c0[at]))
				}
				for p := range pc.k {
					var bv float32
					if pc.dots {
						bv = b[j*ldb+p]
					} else {
						bv = b[p*ldb+j]
					}
					x := float64(a[i*lda+p]) * float64(bv)
					sum += x
					abs += math.Abs(x)
				}
				if d := math.Abs(float64(c[at]) - sum); d > gamma*abs {
					t.Fatalf("%v: C[%d,%d] = %v, want %v (error %.3g > bound %.3g)", pc, i, j, c[at], sum, d, gamma*abs)
				}
			}
		}
	}
}

// TestOwnKernelsIndependentOfTiles checks what lets stacking and helping
// keep every bit (kernels.go): an entry computed in a product of any
// rows of A (and for dots, of any rows of B) and, for rows, from any
// column on, so in another tile or in the masked tail, is the same
// float32 as in the whole product.
func TestOwnKernelsIndependentOfTiles(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(7, 2))
	for trial := range 60 {
		pc := productCase{dots: trial%2 == 1, m: 1 + rng.IntN(30), n: 1 + rng.IntN(200), k: 1 + rng.IntN(256), addC: rng.IntN(2) == 0}
		if pc.dots {
			pc.n, pc.k = 1+rng.IntN(90), 1+rng.IntN(3000)
		}
		a, b, c0, c, lda, ldb, ldc := pc.run(rng)
		i0 := rng.IntN(pc.m)
		i1 := i0 + 1 + rng.IntN(pc.m-i0)
		j0 := rng.IntN(pc.n)
		part := append([]float32(nil), c0...)
		if pc.dots {
			beta := float32(0)
			if pc.addC {
				beta = 1
			}
			dotsGemm(i1-i0, pc.n-j0, pc.k, a[i0*lda:], lda, b[j0*ldb:], ldb, beta, part[i0*ldc+j0:], ldc)
		} else {
			rowsGemm(i1-i0, pc.n-j0, pc.k, a[i0*lda:], lda, b[j0:], ldb, pc.addC, part[i0*ldc+j0:], ldc)
		}
		for i := i0; i < i1; i++ {
			for j := j0; j < pc.n; j++ {
				if got, want := part[i*ldc+j], c[i*ldc+j]; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%v: rows [%d,%d) from column %d: C[%d,%d] = %v, whole product %v", pc, i0, i1, j0, i, j, got, want)
				}
			}
		}
	}
}

// TestKernelFor checks which products run in our kernels: LeNet's thin
// ones in float32 with AVX-512, never a float64 product, ResNet-18's or
// a product whose beta the rows kernel cannot apply.
func TestKernelFor(t *testing.T) {
	needAVX512(t)
	N, T := blas.NoTrans, blas.Trans
	for _, c := range []struct {
		name    string
		tA, tB  blas.Transpose
		m, n, k int
		beta    float32
		want    productKernel
	}{
		{"LeNet conv1 forward, 3 particles", N, N, 30, 200704, 81, 0, rowsProduct},
		{"LeNet conv2 forward chunk, helped half", N, N, 8, 1000, 250, 0, rowsProduct},
		{"LeNet conv1 filter gradient, half the positions", N, T, 60, 81, 100352, 0, dotsProduct},
		{"LeNet conv2 filter gradient", N, T, 40, 250, 12800, 0, blasProduct},
		{"LeNet conv2 input gradient", T, N, 250, 1000, 20, 0, blasProduct},
		{"LeNet fc forward", N, N, 256, 50, 500, 1, blasProduct},
		{"ResNet-18 conv1 forward", N, N, 64, 65536, 147, 0, blasProduct},
		{"ResNet-18 filter gradient", N, T, 64, 576, 16384, 0, blasProduct},
		{"beta other than 0 or 1", N, N, 30, 1000, 81, 0.5, blasProduct},
	} {
		if got := kernelFor(c.tA, c.tB, c.m, c.n, c.k, c.beta); got != c.want {
			t.Errorf("%s: kernel %d, want %d", c.name, got, c.want)
		}
	}
	if got := kernelFor(N, N, 30, 200704, 81, float64(0)); got != blasProduct {
		t.Errorf("float64 product: kernel %d, want the BLAS", got)
	}
}
