package ops

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// needAVX512 skips a test of the paths that take internal/asm's AVX-512
// routines on a processor without AVX-512, where every product runs in
// the BLAS.
func needAVX512(t *testing.T) {
	t.Helper()
	if !asm.UseAVX512 {
		t.Skip("no AVX-512: the products run in the BLAS")
	}
}

// sumBound is γ_n = n·u/(1 − n·u), u the float32 unit roundoff: the
// relative bound on the error of a float32 sum of n terms in any order
// (Higham, Accuracy and Stability of Numerical Algorithms, §3.1), times
// the sum of their magnitudes.
func sumBound(n int) float64 {
	const u = 1.0 / (1 << 24)
	return float64(n) * u / (1 - float64(n)*u)
}

// randomMatrix is rows × ld values in [−1, 1).
func randomMatrix(rng *rand.Rand, rows, ld int) []float32 {
	v := make([]float32, rows*ld)
	for i := range v {
		v[i] = 2*rng.Float32() - 1
	}
	return v
}

// TestProductFor checks which products run in our routines: LeNet's thin
// ones in float32 with AVX-512, never a float64 product, ResNet-18's or
// a product whose beta the rows kernel cannot apply.
func TestProductFor(t *testing.T) {
	needAVX512(t)
	N, T := blas.NoTrans, blas.Trans
	for _, c := range []struct {
		name    string
		tA, tB  blas.Transpose
		m, n, k int
		beta    float32
		want    productBy
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
		if got := productFor(c.tA, c.tB, c.m, c.n, c.k, c.beta); got != c.want {
			t.Errorf("%s: product by %d, want %d", c.name, got, c.want)
		}
	}
	if got := productFor(N, N, 30, 200704, 81, float64(0)); got != blasProduct {
		t.Errorf("float64 product: by %d, want the BLAS", got)
	}
}
