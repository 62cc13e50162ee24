package ops

import "sync/atomic"

// Helping lets a goroutine that has run out of work (a worker whose
// particles are done, package engine) take half of a matrix product, or
// of a loop over channels or images (helpRange), that another goroutine
// is about to run, so that both cores work until the last particle is
// done.
//
// A product is cut between rows of its result, at a multiple of
// splitRows: each half's entries are then the same sums, in the same
// order, as in the uncut product, in gonum's BLAS and in OpenBLAS on
// this project's machines (TestSplitProductSameBits checks the build's
// BLAS on the models' shapes). A filter gradient, whose sum over the
// batch's positions is too long for that (helpCut), is always summed in
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

// minHelpedWork is the fewest multiply-adds a product must have to be
// offered for helping: handing a half to a parked goroutine costs some
// microseconds, a product this size about a hundred.
const minHelpedWork = 4 << 20

// helpJobs hands halves of products to helping goroutines. Unbuffered:
// a half is handed over only when a helper is waiting for one.
var helpJobs = make(chan *helpJob)

// helping is the number of goroutines in Help.
var helping atomic.Int32

// helped counts the halves helpers ran (HelpedHalves).
var helped atomic.Int64

// HelpedHalves is the number of halves of products and loops that
// goroutines in Help have run since the program started.
func HelpedHalves() int64 { return helped.Load() }

// helpWaiting reports whether a goroutine is helping, so that a half is
// worth offering.
func helpWaiting() bool { return helping.Load() > 0 }

// helpJob is half of a product or a loop, run by whoever claims it
// first: a helper, or, if none has begun it when its owner has done the
// other half, the owner itself.
type helpJob struct {
	run     func()
	claimed atomic.Bool
	done    chan struct{}
}

// claimAndRun runs the job unless another goroutine has claimed it and
// reports whether it ran it.
func (j *helpJob) claimAndRun() bool {
	if !j.claimed.CompareAndSwap(false, true) {
		return false
	}
	j.run()
	close(j.done)
	return true
}

// Help runs halves of other goroutines' products and loops until stop is
// closed.
func Help(stop <-chan struct{}) {
	helping.Add(1)
	defer helping.Add(-1)
	for {
		select {
		case j := <-helpJobs:
			if j.claimAndRun() {
				helped.Add(1)
			}
		case <-stop:
			return
		}
	}
}

// helpCut returns the row at which a product C (m × n) = A·B with k
// shared columns is cut for a helper: a multiple of splitRows near the
// middle, or 0 where the product is not worth cutting. Each half reads
// all of B, so B must be small enough to stay in the cache: a filter
// gradient's B (the patches, all positions of the batch) is not, and
// with each half streaming it from memory the product ran no faster
// than whole (BenchmarkHelpedProduct); those are cut along k instead
// (sumOverPositions).
func helpCut(m, n, k int) int {
	if m <= splitRows || m*n*k < minHelpedWork || n*k > maxHelpedB && m < minRowsLargeB {
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

// helpRange runs f(lo, hi) over [0, n): whole, or, where a helper waits
// and the loop reads at least minHelpedValues values, as f(0, n/2) and
// f(n/2, n), one of them on the helper. f must be a loop over channels
// or images whose iterations write apart and do not depend on each
// other, so that each result is the same however [0, n) is cut.
func helpRange(n, values int, f func(lo, hi int)) {
	if n < 2 || values < minHelpedValues || !helpWaiting() {
		f(0, n)
		return
	}
	mid := n / 2
	offerHalf(func() { f(0, mid) }, func() { f(mid, n) })
}

// minHelpedValues is the fewest values a loop must read to be offered
// for helping (helpRange): 512 KB of float32s, some tens of
// microseconds, which LeNet's col2im of a chunk of 10 images (250,000
// values) passes.
const minHelpedValues = 1 << 17

// offerHalf runs first and, on a helper if one is waiting, second; then
// returns once both ran. Where no helper is waiting it runs both itself,
// first then second.
func offerHalf(first, second func()) {
	if !helpWaiting() {
		first()
		second()
		return
	}
	j := &helpJob{run: second, done: make(chan struct{})}
	select {
	case helpJobs <- j:
		first()
		if !j.claimAndRun() {
			<-j.done
		}
	default:
		first()
		second()
	}
}
