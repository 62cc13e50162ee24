package asm

// Col2imPlaneFloat32 adds one image's patch gradient back into its plane
// of one channel, for a convolution of stride 1 and no padding whose
// input rows are at most 16 wide (h × w, k×k filters, oh × ow outputs),
// and sets every patch-gradient value it reads to +0: col2im over the
// taps' runs with clearing (AddRunsClearingFloat32), with each of the
// plane's rows kept in a register while every tap adds into it, the same
// additions in the same order, so the same bits. The runs' loops store
// into the plane and load it again at the next tap, which their stores
// hold up. cols is the channel's first tap row at the image's first
// position, its rows ld apart. It needs UseAVX512: callers
// ask ServesCol2imPlanes.
func Col2imPlaneFloat32(cols *float32, ld int, plane *float32, h, w, k, oh, ow int) {
	col2imPlaneFloat32(cols, ld, plane, h, w, k, oh, ow)
}
