package particles

// scoreSet is what a rule reads of the scores s_ta (target t, particle
// a): Ensemble.Scores in float64 or Ensemble.Scores32 in float32, times
// Ensemble.Scales when set. Either way the rules compute in float64; a
// float32 score converts exactly and is scaled in float64, so a rule's
// result depends on the scores' values, not on how they are held.
type scoreSet struct {
	f64   [][][]float64
	f32   [][][]float32
	scale [][]float64
}

// float is the element type of a score.
type float interface{ ~float32 | ~float64 }

func (e Ensemble) scores() scoreSet {
	return scoreSet{f64: e.Scores, f32: e.Scores32, scale: e.Scales}
}

// targets returns K.
func (s scoreSet) targets() int {
	if s.f32 != nil {
		return len(s.f32)
	}
	return len(s.f64)
}

// particles returns how many particles target t has scores for.
func (s scoreSet) particles(t int) int {
	if s.f32 != nil {
		return len(s.f32[t])
	}
	return len(s.f64[t])
}

// dim returns the length of s_ta.
func (s scoreSet) dim(t, a int) int {
	if s.f32 != nil {
		return len(s.f32[t][a])
	}
	return len(s.f64[t][a])
}

// scales returns target t's scales of the coordinates [lo, lo+n), or nil
// without scales.
func (s scoreSet) scales(t, lo, n int) []float64 {
	if s.scale == nil {
		return nil
	}
	return s.scale[t][lo : lo+n]
}

// finite reports whether s_ta holds no NaN or Inf (the scales are checked
// once, by shape).
func (s scoreSet) finite(t, a int) bool {
	if s.f32 != nil {
		return allFinite(s.f32[t][a])
	}
	return allFinite(s.f64[t][a])
}

// addTo does dst += w·s_ta[lo : lo+len(dst)].
func (s scoreSet) addTo(dst []float64, w float64, t, a, lo int) {
	c := s.scales(t, lo, len(dst))
	if s.f32 != nil {
		addScaled(dst, w, s.f32[t][a][lo:lo+len(dst)], c)
		return
	}
	addScaled(dst, w, s.f64[t][a][lo:lo+len(dst)], c)
}

// dot returns ⟨v, s_ta[lo : lo+len(v)]⟩.
func (s scoreSet) dot(v []float64, t, a, lo int) float64 {
	c := s.scales(t, lo, len(v))
	if s.f32 != nil {
		return dotScaled(v, s.f32[t][a][lo:lo+len(v)], c)
	}
	return dotScaled(v, s.f64[t][a][lo:lo+len(v)], c)
}

// dotScores returns ⟨s_ta, s_ub⟩.
func (s scoreSet) dotScores(t, a, u, b int) float64 {
	n := s.dim(t, a)
	ct, cu := s.scales(t, 0, n), s.scales(u, 0, n)
	if s.f32 != nil {
		return dotBothScaled(s.f32[t][a], ct, s.f32[u][b], cu)
	}
	return dotBothScaled(s.f64[t][a], ct, s.f64[u][b], cu)
}

// copyTo copies s_ta[lo : lo+len(dst)] into dst.
func (s scoreSet) copyTo(dst []float64, t, a, lo int) {
	c := s.scales(t, lo, len(dst))
	if s.f32 != nil {
		copyScaled(dst, s.f32[t][a][lo:lo+len(dst)], c)
		return
	}
	copyScaled(dst, s.f64[t][a][lo:lo+len(dst)], c)
}

// addMean does dst += w·s_ta/m, element by element in that order (the
// warm-up's mix).
func (s scoreSet) addMean(dst []float64, w float64, t, a, m int) {
	c := s.scales(t, 0, len(dst))
	if s.f32 != nil {
		addMean(dst, w, s.f32[t][a], c, float64(m))
		return
	}
	addMean(dst, w, s.f64[t][a], c, float64(m))
}

// The loops below read a score x, scaled by c unless c is nil, as the
// float64 number float64(x)·c[i]: the value a caller that scaled float64
// scores in place would have handed over.

func addScaled[T float](y []float64, w float64, x []T, c []float64) {
	if c == nil {
		axpy(y, w, x)
		return
	}
	for i := range y {
		y[i] += w * (float64(x[i]) * c[i])
	}
}

func dotScaled[T float](v []float64, x []T, c []float64) float64 {
	if c == nil {
		return dot(v, x)
	}
	s := 0.0
	for i := range v {
		s += v[i] * (float64(x[i]) * c[i])
	}
	return s
}

func dotBothScaled[T float](x []T, cx []float64, y []T, cy []float64) float64 {
	if cx == nil {
		return dot(x, y)
	}
	s := 0.0
	for i := range x {
		s += (float64(x[i]) * cx[i]) * (float64(y[i]) * cy[i])
	}
	return s
}

func copyScaled[T float](dst []float64, x []T, c []float64) {
	if c == nil {
		for i, v := range x {
			dst[i] = float64(v)
		}
		return
	}
	for i, v := range x {
		dst[i] = float64(v) * c[i]
	}
}

func addMean[T float](dst []float64, w float64, x []T, c []float64, m float64) {
	if c == nil {
		for i, v := range x {
			dst[i] += w * float64(v) / m
		}
		return
	}
	for i, v := range x {
		dst[i] += w * (float64(v) * c[i]) / m
	}
}

// allFinite reports whether v holds no NaN or Inf: x·0 is ±0 for a
// finite x and NaN otherwise, and four sums keep the loop from waiting
// on one.
func allFinite[T float](v []T) bool {
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

// dot returns ⟨a, b⟩, accumulated in float64.
func dot[A, B float](a []A, b []B) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// axpy does y += a·x.
func axpy[T float](y []float64, a float64, x []T) {
	for i := range y {
		y[i] += a * float64(x[i])
	}
}
