package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// productCase is a product C = A·B (rows) or A·Bᵀ (dots) with padded
// leading dimensions, so that the routines must honour them.
type productCase struct {
	dots    bool
	m, n, k int
	addC    bool
}

func (pc productCase) String() string {
	return fmt.Sprintf("dots=%v m=%d n=%d k=%d addC=%v", pc.dots, pc.m, pc.n, pc.k, pc.addC)
}

// run computes the case's product with the routines, returning A, B, C as
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
		GemmDots(pc.m, pc.n, pc.k, a, lda, b, ldb, beta, c, ldc)
	} else {
		GemmRows(pc.m, pc.n, pc.k, a, lda, b, ldb, pc.addC, c, ldc)
	}
	return a, b, c0, c, lda, ldb, ldc
}

// TestGemmMatchesReference checks GemmRows and GemmDots on 200 seeded random
// shapes, remainders of every tile and mask included, against the
// product summed in float64. The bound is the standard one for a sum of
// k products in floating point (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., eq. 3.5): |ĉ − c| ≤ γ_{k+1}·(Σ|a||b| +
// |c₀|), γ_j = j·u/(1 − j·u), u = 2⁻²⁴ for float32; GemmDots'
// sums are shorter chains (k/16 plus a tree of 4), inside the same bound.
// Entries of C outside the product, in its padding, must be untouched.
func TestGemmMatchesReference(t *testing.T) {
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

// TestGemmIndependentOfTiles checks what lets stacking and helping
// keep every bit (gemm.go): an entry computed in a product of any
// rows of A (and for dots, of any rows of B) and, for rows, from any
// column on, so in another tile or in the masked tail, is the same
// float32 as in the whole product.
func TestGemmIndependentOfTiles(t *testing.T) {
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
			GemmDots(i1-i0, pc.n-j0, pc.k, a[i0*lda:], lda, b[j0*ldb:], ldb, beta, part[i0*ldc+j0:], ldc)
		} else {
			GemmRows(i1-i0, pc.n-j0, pc.k, a[i0*lda:], lda, b[j0:], ldb, pc.addC, part[i0*ldc+j0:], ldc)
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
