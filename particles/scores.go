package particles

import (
	"math"

	"github.com/mtsgd/mtsgd/internal/asm"
)

// scoreSet is what a rule reads of the scores s_ta (target t, particle
// a): Ensemble.Scores in float64 or Ensemble.Scores32 in float32, times
// Ensemble.Factor or normalised (Ensemble.Normalize) as they are read.
// Either way the rules compute in float64: a float32 score converts
// exactly and is scaled in float64, so a rule sees the float64 numbers
// that scaling float64 scores in place gives, however they are held.
type scoreSet struct {
	f64       [][][]float64
	f32       [][][]float32
	factor    float64 // 0: none
	normalize bool
}

// NormalizeFloor is the least norm Ensemble.Normalize divides by, as
// F.normalize's default eps: a coordinate whose scores are all (almost)
// zero stays so rather than being blown up.
const NormalizeFloor = 1e-12

// float is the element type of a score.
type float interface{ ~float32 | ~float64 }

func (e Ensemble) scores() scoreSet {
	return scoreSet{f64: e.Scores, f32: e.Scores32, factor: e.Factor, normalize: e.Normalize}
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

// finite reports whether s_ta, as held, has no NaN or Inf.
func (s scoreSet) finite(t, a int) bool {
	if s.f32 != nil {
		return asm.AllFinite(s.f32[t][a])
	}
	return asm.AllFinite(s.f64[t][a])
}

// columns returns what target t's scores are multiplied by on the
// coordinates [lo, lo+n) when they are normalised: one over each
// coordinate's norm over the particles, computed into buf (length n).
// Without normalisation it returns nil.
func (s scoreSet) columns(t, lo, n int, buf []float64) []float64 {
	if !s.normalize {
		return nil
	}
	buf = buf[:n]
	clear(buf)
	for a := range s.particles(t) {
		if s.f32 != nil {
			addSquares(buf, s.f32[t][a][lo:lo+n])
		} else {
			addSquares(buf, s.f64[t][a][lo:lo+n])
		}
	}
	for x, sq := range buf {
		buf[x] = 1 / math.Max(math.Sqrt(sq), NormalizeFloor)
	}
	return buf
}

// allColumns returns columns for every target over the whole length d,
// in *buf (grown as needed), or nil without normalisation: for the rules
// that read whole scores rather than blocks of coordinates.
func (s scoreSet) allColumns(buf *[][]float64, d int) [][]float64 {
	if !s.normalize {
		return nil
	}
	k := s.targets()
	*buf = grow(*buf, k, d)
	for t := range k {
		s.columns(t, 0, d, (*buf)[t])
	}
	return *buf
}

// scaling is how the elements of a score are read: times c[x] when c is
// set (normalised), else times f when f is not 0, else as they are.
type scaling struct {
	c []float64
	f float64
}

// scaling returns how to read a score whose columns (see columns) are c.
func (s scoreSet) scaling(c []float64) scaling { return scaling{c: c, f: s.factor} }

// addTo does dst += w·s_ta[lo : lo+len(dst)], the score read with c (its
// columns from lo).
func (s scoreSet) addTo(dst []float64, w float64, t, a, lo int, c []float64) {
	if s.f32 != nil {
		addScaled(dst, w, s.f32[t][a][lo:lo+len(dst)], s.scaling(c))
		return
	}
	addScaled(dst, w, s.f64[t][a][lo:lo+len(dst)], s.scaling(c))
}

// dot returns ⟨v, s_ta[lo : lo+len(v)]⟩, the score read with c.
func (s scoreSet) dot(v []float64, t, a, lo int, c []float64) float64 {
	if s.f32 != nil {
		return dotScaled(v, s.f32[t][a][lo:lo+len(v)], s.scaling(c))
	}
	return dotScaled(v, s.f64[t][a][lo:lo+len(v)], s.scaling(c))
}

// dotScores returns ⟨s_ta, s_ub⟩, read with ct and cu.
func (s scoreSet) dotScores(t, a, u, b int, ct, cu []float64) float64 {
	if s.f32 != nil {
		return dotBothScaled(s.f32[t][a], s.scaling(ct), s.f32[u][b], s.scaling(cu))
	}
	return dotBothScaled(s.f64[t][a], s.scaling(ct), s.f64[u][b], s.scaling(cu))
}

// copyTo copies s_ta[lo : lo+len(dst)], read with c, into dst.
func (s scoreSet) copyTo(dst []float64, t, a, lo int, c []float64) {
	if s.f32 != nil && c == nil {
		asm.WidenScaled(dst, s.f32[t][a][lo:lo+len(dst)], s.factor)
		return
	}
	s.copySlow(dst, t, a, lo, c)
}

// copyFinite is copyTo that also reports whether the values it wrote are
// all finite: float32 scores read without columns are checked as they
// are converted, others by a pass over dst.
func (s scoreSet) copyFinite(dst []float64, t, a, lo int, c []float64) bool {
	if s.f32 != nil && c == nil {
		return asm.WidenScaled(dst, s.f32[t][a][lo:lo+len(dst)], s.factor)
	}
	s.copySlow(dst, t, a, lo, c)
	return asm.AllFinite(dst)
}

func (s scoreSet) copySlow(dst []float64, t, a, lo int, c []float64) {
	if s.f32 != nil {
		copyScaled(dst, s.f32[t][a][lo:lo+len(dst)], s.scaling(c))
		return
	}
	copyScaled(dst, s.f64[t][a][lo:lo+len(dst)], s.scaling(c))
}

// addMean does dst += w·s_ta[lo : lo+len(dst)]/m, read with c, element
// by element in that order (the warm-up's mix).
func (s scoreSet) addMean(dst []float64, w float64, t, a, lo, m int, c []float64) {
	if s.f32 != nil {
		addMean(dst, w, s.f32[t][a][lo:lo+len(dst)], s.scaling(c), float64(m))
		return
	}
	addMean(dst, w, s.f64[t][a][lo:lo+len(dst)], s.scaling(c), float64(m))
}

// The loops below read a score element x as the float64 number
// float64(x)·c[i] or float64(x)·f: the number a caller that scaled
// float64 scores in place would have handed over.

func addSquares[T float](sq []float64, x []T) {
	for i, v := range x {
		f := float64(v)
		sq[i] += f * f
	}
}

func addScaled[T float](y []float64, w float64, x []T, s scaling) {
	switch {
	case s.c != nil:
		for i := range y {
			y[i] += w * (float64(x[i]) * s.c[i])
		}
	case s.f != 0:
		for i := range y {
			y[i] += w * (float64(x[i]) * s.f)
		}
	default:
		axpy(y, w, x)
	}
}

func dotScaled[T float](v []float64, x []T, s scaling) float64 {
	sum := 0.0
	switch {
	case s.c != nil:
		for i := range v {
			sum += v[i] * (float64(x[i]) * s.c[i])
		}
	case s.f != 0:
		for i := range v {
			sum += v[i] * (float64(x[i]) * s.f)
		}
	default:
		return dot(v, x)
	}
	return sum
}

func dotBothScaled[T float](x []T, sx scaling, y []T, sy scaling) float64 {
	sum := 0.0
	switch {
	case sx.c != nil:
		for i := range x {
			sum += (float64(x[i]) * sx.c[i]) * (float64(y[i]) * sy.c[i])
		}
	case sx.f != 0:
		for i := range x {
			sum += (float64(x[i]) * sx.f) * (float64(y[i]) * sy.f)
		}
	default:
		return dot(x, y)
	}
	return sum
}

func copyScaled[T float](dst []float64, x []T, s scaling) {
	switch {
	case s.c != nil:
		for i, v := range x {
			dst[i] = float64(v) * s.c[i]
		}
	case s.f != 0:
		for i, v := range x {
			dst[i] = float64(v) * s.f
		}
	default:
		for i, v := range x {
			dst[i] = float64(v)
		}
	}
}

func addMean[T float](dst []float64, w float64, x []T, s scaling, m float64) {
	switch {
	case s.c != nil:
		for i, v := range x {
			dst[i] += w * (float64(v) * s.c[i]) / m
		}
	case s.f != 0:
		for i, v := range x {
			dst[i] += w * (float64(v) * s.f) / m
		}
	default:
		for i, v := range x {
			dst[i] += w * float64(v) / m
		}
	}
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
