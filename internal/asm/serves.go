package asm

// The functions below say whether a routine of this package serves a
// caller's shape on this processor and build, so that the packages above
// ask about the product, plane or convolution they have and never read
// the processor's features or the switches themselves. Each answers from
// the switches at the time of the call: a test that turns a switch off
// sees the callers take their other way.

// ServesThinProducts reports whether GemmRows and GemmDots may compute
// float32 products here; which products they beat the BLAS on is the
// caller's to say.
func ServesThinProducts() bool { return UseAVX512 }

// ServesConvTaps reports whether ConvTapRows, ConvTapDots and ConvTapBack
// serve a convolution of that stride and padding whose output rows are
// ow positions: stride 1, no padding, and a row in at most two vectors
// of 16 (MaxTapRow).
func ServesConvTaps(stride, pad, ow int) bool {
	return UseAVX512 && stride == 1 && pad == 0 && ow <= MaxTapRow
}

// ServesConvPools reports whether ConvPoolTaps, ConvPoolRows and
// ConvPoolBack may compute a convolution's gradients from its pool's
// gradient here; which sizes they take is MaxPoolTaps',
// MaxPoolRowsTaps' and MaxPoolRowsVectors' to say.
func ServesConvPools() bool { return UseAVX512 }

// ServesCol2imPlanes reports whether Col2imPlaneFloat32 serves a
// convolution of that stride and padding over input rows w wide: stride
// 1, no padding, and a row in one vector of 16.
func ServesCol2imPlanes(stride, pad, w int) bool {
	return UseAVX512 && stride == 1 && pad == 0 && w <= 16
}

// SumsFourPlanes reports whether Sum4PlanesFloat32 sums four planes of n
// values side by side here, faster than CopySum4Float32 on each in turn
// (the same bits either way): n a multiple of 4, with AVX2.
func SumsFourPlanes(n int) bool { return n%4 == 0 && UseAVX2 }

// ServesGram reports whether Gram and GramScores32 may run here; where
// they may not, a caller takes the BLAS's Dsyrk.
func ServesGram() bool { return GramAVX512 }
