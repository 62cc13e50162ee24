//go:build !amd64 || purego

// The Go loops that stand in for the assembly of runs_amd64.s and
// pool_amd64.s on other architectures and with -tags purego.

package ops

// useAVX2 has no effect here: the Go loops have one width.
var useAVX2 bool

func addRunsFloat32(plane, src []float32, runs []tapRun) { addRunsGo(plane, src, runs) }

func copyRunsFloat32(dst, plane []float32, runs []tapRun) {
	for _, r := range runs {
		copy(dst[r.pos:r.pos+r.n], plane[r.at:r.at+r.n])
	}
}

func addRunsClearingFloat32(plane, src []float32, runs []tapRun) {
	addRunsGo(plane, src, runs)
	for _, r := range runs {
		clear(src[r.pos : r.pos+r.n])
	}
}

func pool2x2QuadsFloat32(in, out []float32, arg []int32, w, oh, ow int) {
	pool2x2Windows(in, out, arg, w, oh, ow, 0, ow/4*4)
}

func pool2x2QuadsMaxFloat32(in, out []float32, w, oh, ow int) {
	pool2x2MaxWindows(in, out, w, oh, ow, 0, ow/4*4)
}

func copySum4Float32(dst, src []float32, part *[4]float64) {
	copy(dst, src)
	addTo4(part, src)
}

func sum4PlanesFloat32(planes []float32, stride, n int, parts *[4][4]float64) {
	for j := range parts {
		addTo4(&parts[j], planes[j*stride:j*stride+n])
	}
}

func bnSums4Float32(g, x []float32, m float64, sumG, sumGX *[4]float64) {
	addTo4(sumG, g)
	centeredDot4(sumGX, g, x, m)
}

func affine2Float32(dst, g, x []float32, k, c0, c1 float64) { affine(dst, g, x, k, c0, c1) }

func addConstFloat32(dst, src []float32, b float32) { addConst(dst, src, b) }

// useAVX512 is false here: every product runs in the BLAS, and the
// kernels below are never called.
var useAVX512 = false

var poolTapsKernels [maxPoolTaps + 1][4]poolTapsFunc

var tapBackKernels [maxBackFilters + 1]tapBackFunc

var (
	poolRowsKernels [maxPoolRowsTaps + 1][maxPoolRowsVectors + 1]poolRowsFunc
	poolBackKernels [maxPoolRowsTaps + 1][maxPoolRowsVectors + 1]poolBackFunc
)

var rowsKernels [6]func(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)

func gemmDots4x5(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func gemmDots4x1(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func gemmDots1x5(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func gemmDots1x1(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

// runsAVX512 has no effect here.
var runsAVX512 bool

// The tap kernels are never called here (readsTaps).
var (
	tapRowsKernels [maxTapVectors + 1][maxTapRows + 1]tapRowsFunc
	tapDotsKernels [3][4]tapDotsFunc
)

func pool2x2GradFloat32(dy []float32, arg []int32, dx []float32, w, oh, ow int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func col2imPlaneFloat32(cols *float32, ld int, plane *float32, h, w, k, oh, ow int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func pool2x2OctsFloat32(in, out []float32, arg []int32, w, oh, ow int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func gatherFloat32(dst, src []float32, idx []int32) {
	for i, j := range idx {
		dst[i] = src[j]
	}
}

func pooledEntriesFloat32(v, arg, grad []float32, argmax []int32) {
	pooledEntries(v, arg, grad, argmax)
}

func winoGradTilesFloat32(z []float32, zs int, src []float32, idx []int32, ow int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func winoInputTilesFloat32(d []float32, ds, n int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func winoFoldFloat32(plane, d []float32, fold []int32) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func winoFilterTilesFloat32(dw, m []float32, ms int) {
	panic("ops: AVX-512 kernel called without AVX-512")
}

func reluGradFloat32(y, grad, dx *float32, n int) {
	panic("ops: reluGradFloat32 without AVX-512")
}
