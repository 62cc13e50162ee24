package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// helpedShapes are products the models hand to helpers, as gemm sees
// them (row-major C = op(A)·op(B), m × n, k shared): LeNet's at batch
// 256 (a chunk of 64 images), and ResNet-18's at batch 64.
var helpedShapes = []productShape{
	{"lenet conv2 input gradient", blas.Trans, blas.NoTrans, 250, 6400, 20},
	{"lenet linear", blas.NoTrans, blas.NoTrans, 256, 50, 500},
	{"resnet layer1 forward", blas.NoTrans, blas.NoTrans, 64, 1024, 576},
	{"resnet layer2 forward", blas.NoTrans, blas.NoTrans, 128, 1024, 1152},
	{"resnet layer3 input gradient", blas.Trans, blas.NoTrans, 2304, 256, 256},
	{"resnet layer4 filter gradient", blas.NoTrans, blas.Trans, 512, 4608, 256},
	{"odd rows", blas.NoTrans, blas.NoTrans, 301, 700, 90},
}

// productShape is a product as gemm sees it.
type productShape struct {
	name    string
	tA, tB  blas.Transpose
	m, n, k int
}

// lds is the leading dimensions of A and B, stored densely.
func (s productShape) lds() (lda, ldb int) {
	lda, ldb = s.k, s.n
	if s.tA == blas.Trans {
		lda = s.m
	}
	if s.tB == blas.Trans {
		ldb = s.k
	}
	return lda, ldb
}

// startHelper starts a goroutine in ShareWork, waits until it is there, and
// returns what stops it and waits for it to leave; calling that again does
// nothing. Until then, every half handed to it is left to it
// (ownerTakesBackHalves off), so that a test sees it run halves however
// loaded the machine.
func startHelper() (stop func()) {
	leftToHelpers := LeaveHalvesToHelpers(true)
	quit, left := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(left)
		ShareWork(quit)
	}()
	for !shareWaiting() {
		time.Sleep(time.Millisecond)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-left
			LeaveHalvesToHelpers(leftToHelpers)
		})
	}
}

// A product cut between rows at shareCut has the bits of the uncut
// product, in the build's BLAS (gonum's for go test, OpenBLAS with
// -tags openblas): what lets a helper run a half without changing a
// result. The cut is at a multiple of splitRows: in OpenBLAS's Zen
// kernels LeNet's and ResNet-18's products changed bits when cut at 4, 8
// or 16 rows (splitRows).
func TestSplitProductSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, s := range helpedShapes {
		t.Run(s.name, func(t *testing.T) {
			cut := shareCut(s.m, s.n, s.k)
			if cut == 0 || cut%splitRows != 0 {
				t.Fatalf("shareCut(%d, %d, %d) = %d, want a multiple of %d in (0, %d)", s.m, s.n, s.k, cut, splitRows, s.m)
			}
			splitSameBits(t, rng, s, cut, float32(0))
			splitSameBits(t, rng, s, cut, float64(0))
		})
	}
}

func splitSameBits[T float](t *testing.T, rng *rand.Rand, s productShape, cut int, _ T) {
	t.Helper()
	tA, tB, m, n, k := s.tA, s.tB, s.m, s.n, s.k
	a, b := randomFloats[T](rng, m*k), randomFloats[T](rng, k*n)
	lda, ldb := s.lds()
	rest := rowStart(tA, cut, lda)
	whole := make([]T, m*n)
	gemmWhole(tA, tB, m, n, k, a, lda, b, ldb, 0, whole, n)
	halves := make([]T, m*n)
	gemmWhole(tA, tB, cut, n, k, a, lda, b, ldb, 0, halves, n)
	gemmWhole(tA, tB, m-cut, n, k, a[rest:], lda, b, ldb, 0, halves[cut*n:], n)
	if i := firstBitDifference(whole, halves); i >= 0 {
		t.Errorf("%T, cut at row %d of %d: entry (%d, %d) is %v whole, %v in halves", whole, cut, m, i/n, i%n, whole[i], halves[i])
	}
}

// With a goroutine in ShareWork, gemm and sumOverPositions hand it halves, and
// the results are the bits they have with no helper.
func TestHelpedProductsSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2))
	stopHelper := startHelper()
	defer stopHelper()
	before := SharedHalves()
	for _, s := range helpedShapes {
		a, b := randomFloats[float32](rng, s.m*s.k), randomFloats[float32](rng, s.k*s.n)
		lda, ldb := s.lds()
		alone, helped := make([]float32, s.m*s.n), make([]float32, s.m*s.n)
		gemmWhole(s.tA, s.tB, s.m, s.n, s.k, a, lda, b, ldb, 0, alone, s.n)
		gemm(s.tA, s.tB, s.m, s.n, s.k, a, lda, b, ldb, 0, helped, s.n)
		if i := firstBitDifference(alone, helped); i >= 0 {
			t.Errorf("%s: entry %d is %v alone, %v helped", s.name, i, alone[i], helped[i])
		}
	}
	// A filter gradient's sum over positions, halved.
	const m, n, k = 20, 81, 1 << 16
	a, b := randomFloats[float32](rng, m*k), randomFloats[float32](rng, n*k)
	var part scratch[float32]
	helped := make([]float32, m*n)
	sumOverPositions(m, n, k, a, k, b, k, helped, n, &part)
	if SharedHalves() == before {
		t.Error("no half of a product ran on the helper")
	}
	stopHelper()
	alone := make([]float32, m*n)
	sumOverPositions(m, n, k, a, k, b, k, alone, n, &part)
	if i := firstBitDifference(alone, helped); i >= 0 {
		t.Errorf("sum over positions: entry %d is %v alone, %v helped", i, alone[i], helped[i])
	}
}

// sumOverPositions is A·Bᵀ, checked against the sums in float64 over
// shapes that it halves and that it does not: within 1e-5 of the sum of
// the terms' magnitudes in float32 (a float32 rounding unit is 6e-8,
// and a sum of k terms errs by at most about k units of that sum in the
// worst case; blocked sums, as BLAS products are, err by far less) and
// 1e-14 in float64.
func TestSumOverPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 3))
	for _, s := range []struct {
		m, n, k int
		halved  bool
	}{{20, 81, 1 << 16, true}, {6, 250, 6000, true}, {3, 5, 40, false}, {60, 81, 50000, true}} {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.n, s.k), func(t *testing.T) {
			if halved := s.n*s.k >= minHalvedSum; halved != s.halved {
				t.Fatalf("halved: %v, want %v", halved, s.halved)
			}
			checkSumOverPositions(t, rng, s.m, s.n, s.k, 1e-5, float32(0))
			checkSumOverPositions(t, rng, s.m, s.n, s.k, 1e-14, float64(0))
		})
	}
}

func checkSumOverPositions[T float](t *testing.T, rng *rand.Rand, m, n, k int, tol float64, _ T) {
	t.Helper()
	const ldc = 3 // C's rows are apart by more than n: a part of a larger matrix
	a, b := randomFloats[T](rng, m*k), randomFloats[T](rng, n*k)
	c := make([]T, m*(n+ldc))
	var part scratch[T]
	sumOverPositions(m, n, k, a, k, b, k, c, n+ldc, &part)
	for i := range m {
		for j := range n {
			var sum, mag float64
			for l := range k {
				term := float64(a[i*k+l]) * float64(b[j*k+l])
				sum += term
				mag += math.Abs(term)
			}
			if got := float64(c[i*(n+ldc)+j]); math.Abs(got-sum) > tol*mag {
				t.Fatalf("%T: entry (%d, %d) = %v, want %v within %g × %v", c, i, j, got, sum, tol, mag)
			}
		}
	}
}

func randomFloats[T float](rng *rand.Rand, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(rng.NormFloat64())
	}
	return v
}

// firstBitDifference is the first index at which a and b differ in any
// bit, or -1.
func firstBitDifference[T float](a, b []T) int {
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// BenchmarkHelpedProduct times products whole on one core ("alone") and
// cut between rows near the middle at a multiple of splitRows with a
// helper running one half ("helped"), whether or not shareCut would cut
// them: LeNet's conv2 input gradient (a chunk of 64 images) and conv1
// filter gradient over 3 stacked particles and 2 tasks (whose B, the
// patches of the batch, is read by both halves), ResNet-18's first
// stage's forward product (a chunk); and that filter gradient as
// sumOverPositions computes it, its sum in two halves, with a helper and
// without ("sum-halves").
//
//	go test -tags openblas ./models/ops -run '^$' -bench SharedProduct
func BenchmarkHelpedProduct(b *testing.B) {
	for _, s := range []productShape{
		{"lenet-conv2-input-gradient", blas.Trans, blas.NoTrans, 250, 6400, 20},
		{"lenet-conv1-filter-gradient", blas.NoTrans, blas.Trans, 60, 81, 200704},
		{"resnet-layer1-forward", blas.NoTrans, blas.NoTrans, 64, 1024, 576},
	} {
		rng := rand.New(rand.NewPCG(7, 4))
		a, bm, c := randomFloats[float32](rng, s.m*s.k), randomFloats[float32](rng, s.k*s.n), make([]float32, s.m*s.n)
		lda, ldb := s.lds()
		cut := middleCut(s.m)
		rest := rowStart(s.tA, cut, lda)
		b.Run(s.name+"/alone", func(b *testing.B) {
			for b.Loop() {
				gemmWhole(s.tA, s.tB, s.m, s.n, s.k, a, lda, bm, ldb, 0, c, s.n)
			}
		})
		if s.tB == blas.Trans {
			var part scratch[float32]
			for _, help := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/sum-halves/helped=%v", s.name, help), func(b *testing.B) {
					if help {
						defer startHelper()()
					}
					for b.Loop() {
						sumOverPositions(s.m, s.n, s.k, a, s.k, bm, s.k, c, s.n, &part)
					}
				})
			}
		}
		b.Run(s.name+"/helped", func(b *testing.B) {
			defer startHelper()()
			for b.Loop() {
				offerHalf(
					func() { gemmWhole(s.tA, s.tB, cut, s.n, s.k, a, lda, bm, ldb, 0, c, s.n) },
					func() { gemmWhole(s.tA, s.tB, s.m-cut, s.n, s.k, a[rest:], lda, bm, ldb, 0, c[cut*s.n:], s.n) },
				)
			}
		})
	}
}

// A convolution with a bias (padded, so col2im walks taps), batch
// normalisation, ReLU and a 2×2 max-pool, large enough that their loops
// are offered for helping (im2col's and col2im's chunk of 4 images; the
// output gradient's reorder, batch norm's, ReLU's and the pool's
// gradient's 262,144 values), give the same output, loss and gradients, to the bit,
// with a helper waiting as without, in float32 and float64; and the
// helper ran some half.
func TestHelpedLoopsSameBits(t *testing.T) {
	const n, c, h = 32, 32, 16
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		rng := rand.New(rand.NewPCG(7, 5))
		weight := input{name: "weight", shape: []int{n}}
		for range n {
			weight.vals = append(weight.vals, 1.0/n)
		}
		ins := []input{
			randomInput(rng, "x", n, c, h, h),
			randomInput(rng, "w", c, c, 3, 3),
			randomInput(rng, "gamma", 1, c, 1, 1),
			randomInput(rng, "beta", 1, c, 1, 1),
			weight,
			randomInput(rng, "bias", 1, c, 1, 1),
		}
		p := newProbe(t, dt, ins, []int{0, 1, 2, 3, 5}, rng, func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
			x, err := notLeaf(nodes[0])
			if err != nil {
				return nil, err
			}
			y, err := Conv2d(x, nodes[1], nodes[5], 1, 1)
			if err != nil {
				return nil, err
			}
			if y, _, err = BatchNorm(y, nodes[2], nodes[3], nodes[4], 1e-5); err != nil {
				return nil, err
			}
			if y, err = ReLU(y); err != nil {
				return nil, err
			}
			return ReLUMaxPool2d(y, 2, 2, 0)
		})
		wantOut, wantLoss, wantGrads := p.run(t)

		// Whether the helper is on a core when a half is offered is up to
		// the scheduler: on a loaded machine a whole pass can go by
		// before it is, so the pass is repeated until it has run a half,
		// each time to the same bits.
		stopHelper := startHelper()
		ranHalf := false
		for try := 0; try < helpedTries && !ranHalf; try++ {
			before := SharedHalves()
			out, loss, grads := p.run(t)
			ranHalf = SharedHalves() != before
			if i := firstBitDifference(out, wantOut); i >= 0 {
				t.Fatalf("%v: output %d is %v helped, %v alone", dt, i, out[i], wantOut[i])
			}
			if math.Float64bits(loss) != math.Float64bits(wantLoss) {
				t.Fatalf("%v: loss %v helped, %v alone", dt, loss, wantLoss)
			}
			for k := range grads {
				if i := firstBitDifference(grads[k], wantGrads[k]); i >= 0 {
					t.Fatalf("%v: gradient %d's entry %d is %v helped, %v alone", dt, k, i, grads[k][i], wantGrads[k][i])
				}
			}
		}
		stopHelper()
		if !ranHalf {
			t.Errorf("%v: the helper ran no half in %d passes", dt, helpedTries)
		}
	}
}

// helpedTries is how many times a helped pass is run, at most, for the
// helper to run some half of it.
const helpedTries = 50
