package asm

// The loops below move runs of values (a convolution's taps, as im2col
// and col2im walk them), sum planes in four partial sums, and make batch
// normalisation's sums and input gradient. Their float32 forms run in
// runs_amd64.s, whatever the processor (SSE2, which every amd64 has; AVX2
// where UseAVX2), with the additions and roundings of the Go loops, so
// the same bits; the Go loops serve float64 and other machines.

// Run is n output positions from Pos on whose taps fall on n input
// positions from At on (the assembly reads its three int32s).
type Run struct{ Pos, At, N int32 }

// AddRuns adds src's runs into plane: plane[r.At+i] += src[r.Pos+i].
func AddRuns[T Float](plane, src []T, runs []Run) {
	for _, r := range runs {
		s := src[r.Pos : r.Pos+r.N]
		d := plane[r.At : r.At+r.N]
		d = d[:len(s)]
		for i, v := range s {
			d[i] += v
		}
	}
}

// AddRunsFloat32 is AddRuns, eight at a time with AVX2, else four, in the
// order and with the rounding of the Go loop. Each run must lie inside
// plane and src.
func AddRunsFloat32(plane, src []float32, runs []Run) {
	if built {
		addRunsFloat32(plane, src, runs)
		return
	}
	AddRuns(plane, src, runs)
}

// CopyRunsFloat32 copies plane's runs into dst: dst[r.Pos+i] =
// plane[r.At+i] for 0 ≤ i < r.N, four values a step (eight with AVX2,
// sixteen with RunsAVX512), where a call of copy per run spent more on
// the call than on the copying of LeNet's runs of 10. Each run must lie
// inside dst and plane.
func CopyRunsFloat32(dst, plane []float32, runs []Run) {
	if built {
		copyRunsFloat32(dst, plane, runs)
		return
	}
	for _, r := range runs {
		copy(dst[r.Pos:r.Pos+r.N], plane[r.At:r.At+r.N])
	}
}

// AddRunsClearingFloat32 is AddRunsFloat32 that also sets each entry of
// src it reads to +0. A flag tested in AddRunsFloat32's loop made it a
// quarter slower, hence two loops.
func AddRunsClearingFloat32(plane, src []float32, runs []Run) {
	if built {
		addRunsClearingFloat32(plane, src, runs)
		return
	}
	AddRuns(plane, src, runs)
	for _, r := range runs {
		clear(src[r.Pos : r.Pos+r.N])
	}
}

// AddTo4 adds v's values into four partial sums in turn, so that each
// addition need not wait on the last: s[k] += float64(v[i]) for i ≡ k
// mod 4, the last len(v) mod 4 values into s[0].
func AddTo4[T Float](s *[4]float64, v []T) {
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s[0] += float64(v[i])
		s[1] += float64(v[i+1])
		s[2] += float64(v[i+2])
		s[3] += float64(v[i+3])
	}
	for ; i < len(v); i++ {
		s[0] += float64(v[i])
	}
}

// CopySum4Float32 copies src into dst and adds it into part as AddTo4
// does, in order, two float64 lanes per SSE2 register: the same additions
// as AddTo4's to the bit (but for the sign of a NaN made of two NaNs:
// the partial sum's here, either one's in the compiled Go loop).
// len(src) must be a multiple of 4, len(dst) at least len(src).
func CopySum4Float32(dst, src []float32, part *[4]float64) {
	if built {
		copySum4Float32(dst, src, part)
		return
	}
	copy(dst, src)
	AddTo4(part, src)
}

// Sum4PlanesFloat32 adds four planes of n values each, the first at
// planes[0] and each stride values after the last, into parts[j] as
// CopySum4Float32 adds one (without the copy): the same additions to the
// bit, NaNs' signs included, the four planes' chains side by side where
// one plane's wait on each other. n must be a multiple of 4 and planes
// must hold the four. Its assembly needs AVX: callers take it where
// SumsFourPlanes.
func Sum4PlanesFloat32(planes []float32, stride, n int, parts *[4][4]float64) {
	if UseAVX2 {
		sum4PlanesFloat32(planes, stride, n, parts)
		return
	}
	for j := range parts {
		AddTo4(&parts[j], planes[j*stride:j*stride+n])
	}
}

// CenteredDot4 adds g[j]·(x[j] − m) into four partial sums in turn (the
// last len(g) mod 4 terms into the first).
func CenteredDot4[T Float](sum *[4]float64, g, x []T, m float64) {
	x = x[:len(g)]
	j := 0
	for ; j+4 <= len(g); j += 4 {
		sum[0] += float64(g[j]) * (float64(x[j]) - m)
		sum[1] += float64(g[j+1]) * (float64(x[j+1]) - m)
		sum[2] += float64(g[j+2]) * (float64(x[j+2]) - m)
		sum[3] += float64(g[j+3]) * (float64(x[j+3]) - m)
	}
	for ; j < len(g); j++ {
		sum[0] += float64(g[j]) * (float64(x[j]) - m)
	}
}

// BNSums4Float32 adds g into sumG as AddTo4 does and g[i]·(x[i] − m) into
// sumGX as CenteredDot4 does, in one pass over g and x: batch
// normalisation's two parameter gradients, which read the same output
// gradient. Four lanes per YMM register with UseAVX2, else two per SSE2
// register: the same operations either way, so the same bits as the two
// loops (but for the sign of a NaN made of two NaNs, as in
// CopySum4Float32). len(g) must be a multiple of 4, len(x) at least
// len(g). The Go loops it and Affine2Float32 match fuse no multiply-add
// at the default GOAMD64=v1; built for v3 the compiler may fuse them,
// and TestBNSums4Float32 and TestAffine2Float32 would say so.
func BNSums4Float32(g, x []float32, m float64, sumG, sumGX *[4]float64) {
	if built {
		bnSums4Float32(g, x, m, sumG, sumGX)
		return
	}
	AddTo4(sumG, g)
	CenteredDot4(sumGX, g, x, m)
}

// Affine sets dst[j] = (k·g[j] + c0) + c1·x[j], computed in float64.
func Affine[T Float](dst, g, x []T, k, c0, c1 float64) {
	x, dst = x[:len(g)], dst[:len(g)]
	for j, gv := range g {
		dst[j] = T(k*float64(gv) + c0 + c1*float64(x[j]))
	}
}

// Affine2Float32 is Affine for float32 (batch normalisation's input
// gradient), four lanes per YMM register with UseAVX2, else two per SSE2
// register: the same operations, so the same bits. len(g) must be a
// multiple of 4, dst and x at least as long.
func Affine2Float32(dst, g, x []float32, k, c0, c1 float64) {
	if built {
		affine2Float32(dst, g, x, k, c0, c1)
		return
	}
	Affine(dst, g, x, k, c0, c1)
}

// AddConst sets dst[i] = src[i] + b.
func AddConst[T Float](dst, src []T, b T) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = v + b
	}
}

// AddConstFloat32 is AddConst for float32, sixteen values a step (SSE):
// the same additions, so the same bits. len(dst) must be at least
// len(src).
func AddConstFloat32(dst, src []float32, b float32) {
	if built {
		addConstFloat32(dst, src, b)
		return
	}
	AddConst(dst, src, b)
}

// GatherFloat32 sets dst[i] = src[idx[i]] for i < len(idx), sixteen at a
// time with RunsAVX512 (AVX-512's gather). Every idx[i] must index src
// and dst must hold len(idx) values.
func GatherFloat32(dst, src []float32, idx []int32) {
	if RunsAVX512 {
		gatherFloat32(dst, src, idx)
		return
	}
	for i, j := range idx {
		dst[i] = src[j]
	}
}
