package ops

// The switches below choose between two ways of computing the same op,
// the faster one on. Each way is correct; they differ in speed and, for
// some, in the order of a sum and so in the last bits. Tests turn a
// switch off to compare the two ways (the tests named beside each). The
// assembly's own switches, and the processor's features they start from,
// are internal/asm's (switches.go, cpu.go).
var (
	// tappedPatches lets a float32 convolution of stride 1, no padding
	// and output rows of 8 to 32 read its products' taps from its input
	// rather than from patches (directconv.go; TestTapsChangeLittle).
	tappedPatches = true

	// pooledGrads lets a convolution's gradient matrix hold its pool's
	// gradient rather than the dense one (pooledgrad.go;
	// TestPooledFilterGrad, TestFoldedPoolsSameBits).
	pooledGrads = true

	// winogradConvs lets convolutions that fit (winogradFits) use
	// Winograd's products (winograd.go; TestWinogradChangesLittle).
	winogradConvs = true

	// foldPools lets a convolution run the pool that reads its output
	// (convOp's pool; TestFoldedPoolsSameBits).
	foldPools = true

	// foldPoolGrads lets a convolution make the gradient of the pool that
	// reads its output (convGradMatrix; TestFoldedPoolsSameBits).
	foldPoolGrads = true

	// chunkKeptPatches makes a differentiated convolution whose input is
	// not a leaf make its kept patches a chunk at a time, each chunk's
	// product right after it (convForward), rather than the whole batch's
	// patches and then one product. The products' entries are the same
	// sums, but OpenBLAS orders them by the product's shape, so the last
	// bits differ (TestChunkedPatchesChangeLittle).
	chunkKeptPatches = true

	// ownerTakesBackHalves lets a goroutine that handed half of a product
	// or loop to a helper run that half itself if the helper has not begun
	// it by the time the goroutine's own half is done (offerHalf). Off, it
	// waits for the helper, so that a test is sure to see helpers run
	// halves however busy the machine is (LeaveHalvesToHelpers).
	ownerTakesBackHalves = true
)

// LeaveHalvesToHelpers turns ownerTakesBackHalves off (leave true) or
// on, and returns its previous setting, for tests outside this package
// that need helpers to run the halves handed to them: whether one does is
// otherwise decided by timing, and on a loaded machine a helper woken for
// a half is seldom running before its owner has done the other half.
func LeaveHalvesToHelpers(leave bool) (was bool) {
	was = !ownerTakesBackHalves
	ownerTakesBackHalves = !leave
	return was
}
