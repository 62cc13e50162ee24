package asm

import "math"

// Gram sets g[x·n+y], x ≤ y, to ⟨row x, row y⟩ of the n rows of w
// values in rows (row-major; rows must hold ⌈n/4⌉·4 of them, those past n
// read and not used), four rows by four at a time (gramLanesFloat64):
// each entry is eight sums of fused multiply-adds over the columns
// ≡ l (mod 8) in column order, added in a fixed tree, so its bits depend
// on its two rows alone. It needs GramAVX512 (ServesGram); elsewhere
// a caller takes the BLAS's Dsyrk.
//
// OpenBLAS's Dsyrk on MT-SGD's blocks (55 rows of 2,048 for ResNet-18's
// ten tasks and five particles) ran at a quarter of the processor's
// float64 rate; the rows are short and few, and the BLAS packs them on
// every call.
func Gram(rows []float64, n, w int, g []float64) {
	w8 := w &^ 7
	var lanes [128]float64
	for i0 := 0; i0 < n; i0 += 4 {
		for j0 := i0; j0 < n; j0 += 4 {
			a, b := rows[i0*w:], rows[j0*w:]
			clear(lanes[:])
			if w8 > 0 {
				gramLanesFloat64(&a[0], &b[0], w, w8, &lanes)
			}
			for i := range 4 {
				for j := range 4 {
					x, y := i0+i, j0+j
					if x > y || y >= n {
						continue
					}
					l := lanes[(4*i+j)*8:][:8]
					addTail(l, a[i*w:(i+1)*w], b[j*w:(j+1)*w], w8)
					g[x*n+y] = sumLanes8(l)
				}
			}
		}
	}
}

// addTail adds a[c]·b[c], converted to float64 (exactly), into lane
// c − from of l, for the columns c from from on (fewer than eight), by
// fused multiply-adds.
func addTail[A, B Float](l []float64, a []A, b []B, from int) {
	for c := from; c < len(a); c++ {
		l[c-from] = math.FMA(float64(a[c]), float64(b[c]), l[c-from])
	}
}

// sumLanes8 adds eight lanes in Gram's fixed tree.
func sumLanes8(l []float64) float64 {
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

// GramScores32 is Gram for MT-SGD's float32 scores (package particles)
// read where they lie, without a float64 copy: it sets g[x·n+y], x ≤ y,
// over the coordinates [lo, hi), for the K·M score rows x = t·M + a
// (s[t][a], each value read as float64(v)·f, as WidenScaled would have
// written it; f = 0: none) and, with theta, the score-position entries
// of the M position rows after them (y = K·M + b); the positions' own
// entries are not set (no rule reads them). Each entry has the bits
// Gram gives on those rows widened into float64. It needs GramAVX512.
//
// It reports whether the scaled scores are all finite, from their own
// entries (a sum of squares is not finite when a value is not). A row of
// finite float32 scores has a finite entry unless a large factor makes
// its squares overflow, which the rule's sums could not hold either:
// that too is reported.
func GramScores32(s [][][]float32, theta [][]float64, lo, hi int, f float64, g []float64, n int) (finite bool) {
	k, m := len(s), len(s[0])
	km := k * m
	w := hi - lo
	w8 := w &^ 7
	if f == 0 {
		f = 1
	}
	// Rows past the last are read as the last one, and not used.
	row := func(x int) []float32 {
		x = min(x, km-1)
		return s[x/m][x%m][lo:hi]
	}
	var lanes [128]float64
	var a, b [4]*float32
	var p [4]*float64
	finite = true
	for i0 := 0; i0 < km; i0 += 4 {
		for i := range a {
			a[i] = &row(i0 + i)[0]
		}
		for j0 := i0; j0 < km; j0 += 4 {
			for j := range b {
				b[j] = &row(j0 + j)[0]
			}
			clear(lanes[:])
			if w8 > 0 {
				gramLanes32x32(&a, &b, w8, f, &lanes)
			}
			for i := range 4 {
				for j := range 4 {
					x, y := i0+i, j0+j
					if x > y || y >= km {
						continue
					}
					l := lanes[(4*i+j)*8:][:8]
					addTailScaled(l, row(x), f, row(y), f, w8)
					g[x*n+y] = sumLanes8(l)
					if x == y && (math.IsNaN(g[x*n+y]) || math.IsInf(g[x*n+y], 0)) {
						finite = false
					}
				}
			}
		}
		if theta == nil {
			continue
		}
		for j0 := 0; j0 < m; j0 += 4 {
			for j := range p {
				p[j] = &theta[min(j0+j, m-1)][lo]
			}
			clear(lanes[:])
			if w8 > 0 {
				gramLanes32x64(&a, &p, w8, f, &lanes)
			}
			for i := range 4 {
				for j := range 4 {
					x, y := i0+i, j0+j
					if x >= km || y >= m {
						continue
					}
					l := lanes[(4*i+j)*8:][:8]
					addTailScaled(l, row(x), f, theta[y][lo:hi], 1, w8)
					g[x*n+km+y] = sumLanes8(l)
				}
			}
		}
	}
	return finite
}

// addTailScaled is addTail with each value v of a read as float64(v)·fa
// and of b as float64(v)·fb.
func addTailScaled[A, B Float](l []float64, a []A, fa float64, b []B, fb float64, from int) {
	for c := from; c < len(a); c++ {
		l[c-from] = math.FMA(float64(a[c])*fa, float64(b[c])*fb, l[c-from])
	}
}
