package ops

import "sync/atomic"

// Work sharing lets a goroutine that has run out of work (a worker whose
// particles are done, package engine) take half of a matrix product, or
// of a loop over channels or images (shareRange), that another goroutine
// is about to run, so that both cores work until the last particle is
// done.
//
// A product is cut between rows of its result, at a multiple of
// splitRows: each half's entries are then the same sums, in the same
// order, as in the uncut product, in gonum's BLAS and in OpenBLAS on
// this project's machines (TestSplitProductSameBits checks the build's
// BLAS on the models' shapes). A filter gradient, whose sum over the
// batch's positions is too long for that (shareCut), is always summed in
// two halves whether or not a helper runs one (sumOverPositions). So
// whether a helper ran a half never changes a bit of a result: timing
// decides only who does the work.

// splitRows is the multiple of rows at which a product is cut. In
// OpenBLAS 0.3.21 on this project's AMD EPYC (its Zen kernels), cutting
// LeNet's and ResNet-18's products at 4, 8 or 16 rows changed bits, and at
// 12, 24, 36, 48, 72, 96, 120, 240 or 264 rows did not, in float32 and
// float64: its kernels' blocks of the result evidently end on multiples
// of 12 rows. gonum's products kept their bits at every cut.
const splitRows = 12

// minSharedWork is the fewest multiply-adds a product must have to be
// offered for helping: handing a half to a parked goroutine costs some
// microseconds, a product this size about a hundred.
const minSharedWork = 4 << 20

// sharedJobs hands halves of products to helping goroutines. Unbuffered:
// a half is handed over only when a helper is waiting for one.
var sharedJobs = make(chan *sharedJob)

// sharing is the number of goroutines in ShareWork.
var sharing atomic.Int32

// shared counts the halves helpers ran (SharedHalves).
var shared atomic.Int64

// SharedHalves is the number of halves of products and loops that
// goroutines in ShareWork have run since the program started.
func SharedHalves() int64 { return shared.Load() }

// shareWaiting reports whether a goroutine is helping, so that a half is
// worth offering.
func shareWaiting() bool { return sharing.Load() > 0 }

// sharedJob is half of a product or a loop, run by whoever claims it
// first: a helper, or, if none has begun it when its owner has done the
// other half, the owner itself.
type sharedJob struct {
	run     func()
	claimed atomic.Bool
	done    chan struct{}
}

// claimAndRun runs the job unless another goroutine has claimed it and
// reports whether it ran it.
func (j *sharedJob) claimAndRun() bool {
	if !j.claimed.CompareAndSwap(false, true) {
		return false
	}
	j.run()
	close(j.done)
	return true
}

// ShareWork runs halves of other goroutines' products and loops until stop is
// closed.
func ShareWork(stop <-chan struct{}) {
	sharing.Add(1)
	defer sharing.Add(-1)
	for {
		select {
		case j := <-sharedJobs:
			if j.claimAndRun() {
				shared.Add(1)
			}
		case <-stop:
			return
		}
	}
}

// shareCut returns the row at which a product C (m × n) = A·B with k
// shared columns is cut for a helper: a multiple of splitRows near the
// middle, or 0 where the product is not worth cutting. Each half reads
// all of B, so B must be small enough to stay in the cache: a filter
// gradient's B (the patches, all positions of the batch) is not, and
// with each half streaming it from memory the product ran no faster
// than whole (BenchmarkHelpedProduct); those are cut along k instead
// (sumOverPositions).
func shareCut(m, n, k int) int {
	if m <= splitRows || m*n*k < minSharedWork || n*k > maxHelpedB && m < minRowsLargeB {
		return 0
	}
	if cut := middleCut(m); cut < m {
		return cut
	}
	return 0
}

// middleCut is the multiple of splitRows nearest the middle of m rows,
// at least splitRows.
func middleCut(m int) int {
	return max(1, (m+splitRows)/(2*splitRows)) * splitRows
}

// minRowsLargeB is the fewest rows of a product cut by rows whose B is
// larger than maxHelpedB: each half then does at least 28 multiply-adds
// for each value of B it reads. ResNet-18's 64-filter convolutions
// (64 × 1,024 × 576 a chunk) ran 1.45 times as fast helped; conv1's
// filter gradient over LeNet's stacked particles (60 rows, B of 16 M
// values) no faster (BenchmarkHelpedProduct).
const minRowsLargeB = 64

// maxHelpedB is the most values of B (k × n) in a product cut by rows
// for a helper: 1 MB of float32s.
const maxHelpedB = 1 << 18

// shareRange runs f(lo, hi) over [0, n): whole, or, where a helper waits
// and the loop reads at least minHelpedValues values, as f(0, n/2) and
// f(n/2, n), one of them on the helper. f must be a loop over channels
// or images whose iterations write apart and do not depend on each
// other, so that each result is the same however [0, n) is cut.
func shareRange(n, values int, f func(lo, hi int)) {
	if n < 2 || values < minHelpedValues || !shareWaiting() {
		f(0, n)
		return
	}
	mid := n / 2
	offerHalf(func() { f(0, mid) }, func() { f(mid, n) })
}

// minHelpedValues is the fewest values a loop must read to be offered
// for helping (shareRange): 512 KB of float32s, some tens of
// microseconds, which LeNet's col2im of a chunk of 10 images (250,000
// values) passes.
const minHelpedValues = 1 << 17

// offerHalf runs first and, on a helper if one is waiting, second; then
// returns once both ran. Where no helper is waiting it runs both itself,
// first then second.
func offerHalf(first, second func()) {
	if !shareWaiting() {
		first()
		second()
		return
	}
	j := &sharedJob{run: second, done: make(chan struct{})}
	select {
	case sharedJobs <- j:
		first()
		if !ownerTakesBackHalves || !j.claimAndRun() {
			<-j.done
		}
	default:
		first()
		second()
	}
}
