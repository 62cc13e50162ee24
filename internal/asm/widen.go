package asm

// WidenScaled sets dst[i] = float64(x[i])·f (f = 0: none, which times 1
// is exactly) and reports whether every dst[i] is finite: sixteen values
// a step with WidenAVX512 (widen_amd64.s), the rest in Go. The product
// is IEEE's, rounded the same in a vector lane as in the Go loop, so the
// results are the same to the bit. dst must hold len(x) values.
func WidenScaled(dst []float64, x []float32, f float64) (finite bool) {
	if f == 0 {
		f = 1
	}
	dst = dst[:len(x)]
	body := 0
	finite = true
	if WidenAVX512 {
		body = len(x) &^ 15
		if body > 0 {
			finite = widenScaledFloat32(&dst[0], &x[0], body, f)
		}
	}
	tail := dst[body:]
	for i, v := range x[body:] {
		tail[i] = float64(v) * f
	}
	return AllFinite(tail) && finite
}
