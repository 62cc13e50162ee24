package asm

import "math"

// Negate writes −src into dst (of the same length) and reports whether
// src is finite: x·0 is 0 for a finite x and NaN otherwise, summed in
// four places so that the additions do not wait on each other. From
// float32 to float32 with NegateAVX512 it takes sixteen values a step
// (negate_amd64.s), the rest in Go: a flip of the sign bit, which is
// what the Go loop's −x is to the bit.
func Negate[S, D Float](dst []D, src []S) (finite bool) {
	dst = dst[:len(src)]
	var s [4]float64
	i := 0
	s32, ok1 := any(src).([]float32)
	d32, ok2 := any(dst).([]float32)
	if ok1 && ok2 && NegateAVX512 && len(src) >= 16 {
		i = len(src) &^ 15
		if !negateFloat32(&d32[0], &s32[0], i) {
			s[0] = math.NaN()
		}
	}
	for ; i+4 <= len(src); i += 4 {
		x0, x1, x2, x3 := float64(src[i]), float64(src[i+1]), float64(src[i+2]), float64(src[i+3])
		dst[i], dst[i+1], dst[i+2], dst[i+3] = D(-x0), D(-x1), D(-x2), D(-x3)
		s[0] += x0 * 0
		s[1] += x1 * 0
		s[2] += x2 * 0
		s[3] += x3 * 0
	}
	for ; i < len(src); i++ {
		x := float64(src[i])
		dst[i] = D(-x)
		s[0] += x * 0
	}
	return (s[0]+s[1])+(s[2]+s[3]) == 0
}
