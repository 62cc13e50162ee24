//go:build !purego

package ops

// pool2x2QuadsFloat32 computes the outputs and argmaxes of one plane's
// 2×2 windows (stride 2) four at a time with SSE2, for the first
// ow/4·4 outputs of each of the oh output rows: the windows of
// pool2x2Float32, with its comparisons on the values' bits (greaterBits)
// in the same order, so the same outputs and argmaxes to the bit. in is
// the plane (w columns, at least 2·oh rows, 2·ow ≤ w), out and arg its
// oh·ow outputs; the outputs past each row's quads are left to the
// caller.
//
//go:noescape
func pool2x2QuadsFloat32(in, out []float32, arg []int32, w, oh, ow int)

// pool2x2QuadsMaxFloat32 is pool2x2QuadsFloat32 without the argmaxes:
// each window's largest reluBits, as pool2x2MaxFloat32 takes them.
//
//go:noescape
func pool2x2QuadsMaxFloat32(in, out []float32, w, oh, ow int)

// pool2x2GradFloat32 is poolBackwardPlanes for one plane of 2×2 windows
// with stride 2 that cover it exactly (h = 2·oh, w = 2·ow), with
// AVX-512: each of dx's values is set once, to +0 plus its window's
// gradient where it is the window's argmax (the addition the Go loop
// makes into the cleared plane) and to +0 elsewhere, so the same bits
// (TestPool2x2Grad). dy and arg are the plane's oh·ow outputs.
//
//go:noescape
func pool2x2GradFloat32(dy []float32, arg []int32, dx []float32, w, oh, ow int)

// pool2x2OctsFloat32 is pool2x2Float32 for one plane with AVX-512,
// eight windows at a time and a row's last ones masked: the same
// comparisons in the same order, so the same outputs and argmaxes
// (TestPool2x2Float32 runs it and the SSE2 loop).
//
//go:noescape
func pool2x2OctsFloat32(in, out []float32, arg []int32, w, oh, ow int)
