//go:build !purego

package ops

import "golang.org/x/sys/cpu"

// useAVX2 makes the runs' loops below move eight values a step where the
// CPU has AVX2 (four with SSE otherwise). Each lane's addition is the
// same either way, so the results are the same to the bit; the tests
// run both widths.
var useAVX2 = cpu.X86.HasAVX2

// runsAVX512 makes copyRunsFloat32 move sixteen values a step where the
// CPU has AVX-512, a run's last values under a mask: im2col's runs of 10
// over LeNet's second layer take one step rather than two
// (BenchmarkIm2col/lenet-conv2: 60-99 against 116-186 µs, alternated).
var runsAVX512 = cpu.X86.HasAVX512F

// addRunsFloat32 adds src's runs into plane: for each run r, plane[r.at+i]
// += src[r.pos+i] for 0 ≤ i < r.n, eight at a time with AVX2, else four
// (SSE, which every amd64 has), in the order and with the rounding of the Go loop
// (addRunsGo). Each run must lie inside plane and src: the caller slices
// them to a geometry's plane and positions, which its taps were made
// for.
//
//go:noescape
func addRunsFloat32(plane, src []float32, runs []tapRun)

// copyRunsFloat32 copies plane's runs into dst: dst[r.pos+i] =
// plane[r.at+i] for 0 ≤ i < r.n, four at a time, where a call of copy per
// run spent more on the call than on the copying of LeNet's runs of 10.
// The same bounds as for addRunsFloat32 apply.
//
//go:noescape
func copyRunsFloat32(dst, plane []float32, runs []tapRun)

// addRunsClearingFloat32 is addRunsFloat32 that also sets each entry of
// src it reads to +0. A flag tested in addRunsFloat32's loop made it a
// quarter slower, hence two loops.
//
//go:noescape
func addRunsClearingFloat32(plane, src []float32, runs []tapRun)

// copySum4Float32 copies src into dst and adds it into part as addTo4
// does: part[k] += float64(src[i]) for i ≡ k mod 4, in order, two
// float64 lanes per SSE2 register, the same additions as addTo4's to the
// bit (but for the sign of a NaN made of two NaNs: the partial sum's
// here, either one's in the compiled Go loop). len(src) must be a
// multiple of 4, len(dst) at least len(src).
//
//go:noescape
func copySum4Float32(dst, src []float32, part *[4]float64)

// sum4PlanesFloat32 adds four planes of n values each, the first at
// planes[0] and each stride values after the last, into parts[j] as
// copySum4Float32 adds one (without the copy): the same additions to the
// bit, NaNs' signs included, the four planes' chains side by side where
// one plane's wait on each other. n must be a multiple of 4 and planes
// must hold the four. It needs AVX (useAVX2).
//
//go:noescape
func sum4PlanesFloat32(planes []float32, stride, n int, parts *[4][4]float64)

// bnSums4Float32 adds g into sumG as addTo4 does and g[i]·(x[i] − m) into
// sumGX as centeredDot4 does (sumGX[k] += float64(g[i])·(float64(x[i]) −
// m) for i ≡ k mod 4, in order), in one pass over g and x: batch
// normalisation's two parameter gradients, which read the same output
// gradient. Four lanes per YMM register with AVX (useAVX2), else two per
// SSE2 register: the same operations either way, so the same bits as
// the two loops (but for the sign of a NaN made of two NaNs, as in
// copySum4Float32). len(g) must be a multiple of 4, len(x) at least
// len(g). The Go loops it and affine2Float32 match fuse no multiply-add
// at the default GOAMD64=v1; built for v3 the compiler may fuse them,
// and TestBNSums4Float32 and TestAffine2Float32 would say so.
//
//go:noescape
func bnSums4Float32(g, x []float32, m float64, sumG, sumGX *[4]float64)

// affine2Float32 sets dst[i] = float32((k·g[i] + c0) + c1·x[i]), computed in
// float64 as bnInputGrad's loop does, four lanes per YMM register with
// AVX (useAVX2), else two per SSE2 register: the same operations, so the
// same bits. len(g) must be a multiple of 4, dst
// and x at least as long.
//
//go:noescape
func affine2Float32(dst, g, x []float32, k, c0, c1 float64)

// addConstFloat32 sets dst[i] = src[i] + b, sixteen values a step (SSE):
// the same additions as the Go loop's, so the same bits. len(dst) must
// be at least len(src).
//
//go:noescape
func addConstFloat32(dst, src []float32, b float32)

// col2imPlaneFloat32 is col2imRuns with clearing for one image's plane
// of one channel, its input rows at most 16 wide (stride 1, no padding):
// each of the plane's rows is kept in a register while every tap adds
// into it, the same additions in the same order, so the same bits
// (TestCol2imPlanes). The adding loops' runs store into the plane and
// load it again at the next tap, which their stores hold up. cols is the
// channel's first tap row at the image's first position, ld apart.
//
//go:noescape
func col2imPlaneFloat32(cols *float32, ld int, plane *float32, h, w, k, oh, ow int)

// gatherFloat32 sets dst[i] = src[idx[i]] for i < len(idx), sixteen at
// a time (AVX-512's gather; it needs runsAVX512). Every idx[i] must
// index src and dst must hold len(idx) values.
//
//go:noescape
func gatherFloat32(dst, src []float32, idx []int32)

// pooledEntriesFloat32 is pooledEntries sixteen pool outputs at a time
// (AVX-512; it needs runsAVX512): the same values.
//
//go:noescape
func pooledEntriesFloat32(v, arg, grad []float32, argmax []int32)

// winoGradTilesFloat32 is gradTilesGo sixteen tiles at a time (AVX-512's
// gathers; it needs runsAVX512): the same values. z must hold 15·zs +
// len(idx) values, and src each tile's entries.
//
//go:noescape
func winoGradTilesFloat32(z []float32, zs int, src []float32, idx []int32, ow int)

// winoInputTilesFloat32 is inputTilesGo sixteen tiles at a time
// (AVX-512): the same values. d must hold 15·ds + n values.
//
//go:noescape
func winoInputTilesFloat32(d []float32, ds, n int)

// winoFoldFloat32 is foldTilesGo sixteen positions at a time (AVX-512's
// gathers): the same values. fold must hold 4·len(plane) entries, each
// −1 or an index of d.
//
//go:noescape
func winoFoldFloat32(plane, d []float32, fold []int32)

// winoFilterTilesFloat32 is filterTilesGo sixteen filters at a time
// (AVX-512's scatters): the same values. m must hold 15·ms + len(dw)/9
// values.
//
//go:noescape
func winoFilterTilesFloat32(dw, m []float32, ms int)
