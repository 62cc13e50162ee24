package particles

import "math"

// gramBlock sets g[x·n+y], x ≤ y, to ⟨row x, row y⟩ of the n rows of w
// values in rows (row-major; rows must hold ⌈n/4⌉·4 of them, those past n
// read and not used), four rows by four at a time (gramLanesFloat64):
// each entry is eight sums of fused multiply-adds over the columns
// ≡ l (mod 8) in column order, added in a fixed tree, so its bits depend
// on its two rows alone. It needs AVX-512 (gramAVX512); elsewhere
// gramProducts calls the BLAS's Dsyrk.
//
// OpenBLAS's Dsyrk on MT-SGD's blocks (55 rows of 2,048 for ResNet-18's
// ten tasks and five particles) ran at a quarter of the processor's
// float64 rate; the rows are short and few, and the BLAS packs them on
// every call.
func gramBlock(rows []float64, n, w int, g []float64) {
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

// addTail adds a[c]·b[c] into lane c − from of l, for the columns c from
// from on (fewer than eight), by fused multiply-adds.
func addTail(l, a, b []float64, from int) {
	for c := from; c < len(a); c++ {
		l[c-from] = math.FMA(a[c], b[c], l[c-from])
	}
}

// sumLanes8 adds eight lanes in gramBlock's fixed tree.
func sumLanes8(l []float64) float64 {
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

// gramLanesGo is gramLanesFloat64 in Go, for the tests: the same fused
// multiply-adds in the same order.
func gramLanesGo(a, b []float64, ld, w int, lanes *[128]float64) {
	clear(lanes[:])
	for i := range 4 {
		for j := range 4 {
			l := lanes[(4*i+j)*8:][:8]
			ra, rb := a[i*ld:][:w], b[j*ld:][:w]
			for c := range w {
				l[c%8] = math.FMA(ra[c], rb[c], l[c%8])
			}
		}
	}
}
