package asm

// AllFinite reports whether every value of v is finite: v·0 is ±0 for a
// finite v and NaN otherwise, summed in four places so that the
// additions do not wait on each other. It is the one test of finiteness
// the packages above share, in the precision of v.
func AllFinite[T Float](v []T) bool {
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += v[i] * 0
		s1 += v[i+1] * 0
		s2 += v[i+2] * 0
		s3 += v[i+3] * 0
	}
	for ; i < len(v); i++ {
		s0 += v[i] * 0
	}
	return s0+s1+s2+s3 == 0
}
