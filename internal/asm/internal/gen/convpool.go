package main

import (
	"fmt"
	"strings"
)

// poolTapsRoutine writes convPoolTapsKxR, the filter gradients of a
// one-channel convolution with k×k filters whose output feeds a pool,
// from the pool's gradients rather than the convolution's: for R rows r
// of values v (ldv bytes apart) sharing one row of argmaxes arg (the
// convolution's output positions, int32s held as float32 bits), for each
// image and each of its entries e, v[r, e] times the k×k window of x at
// the input offset of arg[e]: a + ⌊a/ow⌋·skip, skip = w − ow, the
// quotient ⌊a·divOW/2³²⌋ (divOW = ⌈2³²/ow⌉, exact for the positions of
// an image), summed into dw's row r (k rows of k taps, lddw bytes apart,
// which the caller clears). Row ky of the window is one masked vector
// of k lanes, rowX bytes below the last, loaded once for the R rows.
// Each tap's sum for an image is one chain of fused multiply-adds over
// the image's entries in order, then added into dw, image by image: a
// row's bits do not depend on R.
//
// Registers: Z0..Z(R·k−1) the image's sums, Z28 a window row, Z31, Z30,
// Z29 the rows' v[e]; SI v, DI arg, R8 the image's input, R9 the window's
// row, R10 rowX, R11 imageX, R12 ldv, R13 dw, R14 lddw, R15 divOW, BX
// skip, CX the entries left, DX the images left.
func poolTapsRoutine(b *strings.Builder, k, rows int) {
	a := asm{b}
	name := fmt.Sprintf("convPoolTaps%dx%d", k, rows)
	fmt.Fprintf(b, "// func %s(v *float32, ldv int, arg *float32, entries, images int, x *float32, imageX, rowX int, dw *float32, lddw, divOW, skip int)\n", name)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-96\n", name)
	a.op("MOVQ $%d, AX", 1<<k-1)
	a.op("KMOVW AX, K1")
	a.op("MOVQ v+0(FP), SI")
	a.op("MOVQ ldv+8(FP), R12")
	a.op("MOVQ arg+16(FP), DI")
	a.op("MOVQ images+32(FP), DX")
	a.op("MOVQ x+40(FP), R8")
	a.op("MOVQ imageX+48(FP), R11")
	a.op("MOVQ rowX+56(FP), R10")
	a.op("MOVQ dw+64(FP), R13")
	a.op("MOVQ lddw+72(FP), R14")
	a.op("MOVQ divOW+80(FP), R15")
	a.op("MOVQ skip+88(FP), BX")
	acc := func(r, ky int) string { return fmt.Sprintf("Z%d", r*k+ky) }
	a.label("image")
	for r := range rows {
		for ky := range k {
			a.op("VXORPS %s, %s, %s", acc(r, ky), acc(r, ky), acc(r, ky))
		}
	}
	a.op("MOVQ entries+24(FP), CX")
	a.label("entry")
	a.op("VBROADCASTSS (SI), Z31")
	if rows > 1 {
		a.op("VBROADCASTSS (SI)(R12*1), Z30")
	}
	if rows > 2 {
		a.op("VBROADCASTSS (SI)(R12*2), Z29")
	}
	a.op("MOVLQZX (DI), AX")
	a.op("MOVQ AX, R9")
	a.op("IMULQ R15, R9")
	a.op("SHRQ $32, R9")
	a.op("IMULQ BX, R9")
	a.op("ADDQ AX, R9")
	a.op("LEAQ (R8)(R9*4), R9")
	for ky := range k {
		if rows == 1 {
			a.op("VFMADD231PS (R9), Z31, K1, %s", acc(0, ky))
		} else {
			a.op("VMOVUPS.Z (R9), K1, Z28")
			for r := range rows {
				a.op("VFMADD231PS Z28, Z%d, %s", 31-r, acc(r, ky))
			}
		}
		if ky < k-1 {
			a.op("ADDQ R10, R9")
		}
	}
	a.op("ADDQ $4, SI")
	a.op("ADDQ $4, DI")
	a.op("DECQ CX")
	a.op("JNZ entry")
	// Add the image's sums into dw.
	a.op("MOVQ R13, R9")
	for r := range rows {
		for ky := range k {
			a.op("VMOVUPS.Z %d(R9), K1, Z28", 4*k*ky)
			a.op("VADDPS %s, Z28, Z28", acc(r, ky))
			a.op("VMOVUPS Z28, K1, %d(R9)", 4*k*ky)
		}
		if r < rows-1 {
			a.op("ADDQ R14, R9")
		}
	}
	a.op("ADDQ R11, R8")
	a.op("DECQ DX")
	a.op("JNZ image")
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}

// windowAddress emits R9 = base + the byte offset in an image laid out
// rows × columns × channels (cBytes per position) of the window at the
// convolution output position in AX: a + ⌊a/ow⌋·skip positions, the
// quotient ⌊a·divOW/2³²⌋.
func windowAddress(a asm, base string) {
	a.op("MOVQ AX, R9")
	a.op("IMULQ R15, R9")
	a.op("SHRQ $32, R9")
	a.op("IMULQ BX, R9")
	a.op("ADDQ AX, R9")
	a.op("IMULQ R12, R9")
	a.op("ADDQ %s, R9", base)
}

// poolRowsRoutine writes convPoolRowsKxV, the filter gradient of a
// convolution over C channels with k×k filters whose output feeds a
// pool, from the pool's gradient, its input laid out rows × columns ×
// channels: for each image and each of its entries e, v[e] times the
// window at arg[e] (the output position, an int32 held as float32 bits;
// see windowAddress), whose row ky is k·C values in a row, read as V
// vectors; summed into dw (k rows of 16·V values, the lanes past k·C
// meaningless). Each sum is one chain of fused multiply-adds over the
// images' entries in order.
//
// Registers: Z0..Z(k·V−1) the sums, Z31 v[e]; SI v, DI arg, R8 the
// image's input, R9 the window's row, R10 rowX, R11 imageX, R12 cBytes,
// R13 dw, R15 divOW, BX skip, CX the entries left, DX the images left.
func poolRowsRoutine(b *strings.Builder, k, vectors int) {
	a := asm{b}
	name := fmt.Sprintf("convPoolRows%dx%d", k, vectors)
	fmt.Fprintf(b, "// func %s(v *float32, arg *float32, entries, images int, x *float32, imageX, rowX int, dw *float32, divOW, skip, cBytes int)\n", name)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-88\n", name)
	a.op("MOVQ v+0(FP), SI")
	a.op("MOVQ arg+8(FP), DI")
	a.op("MOVQ images+24(FP), DX")
	a.op("MOVQ x+32(FP), R8")
	a.op("MOVQ imageX+40(FP), R11")
	a.op("MOVQ rowX+48(FP), R10")
	a.op("MOVQ dw+56(FP), R13")
	a.op("MOVQ divOW+64(FP), R15")
	a.op("MOVQ skip+72(FP), BX")
	a.op("MOVQ cBytes+80(FP), R12")
	for i := range k * vectors {
		a.op("VXORPS Z%d, Z%d, Z%d", i, i, i)
	}
	a.label("image")
	a.op("MOVQ entries+16(FP), CX")
	a.label("entry")
	a.op("VBROADCASTSS (SI), Z31")
	a.op("MOVLQZX (DI), AX")
	windowAddress(a, "R8")
	for ky := range k {
		for v := range vectors {
			a.op("VFMADD231PS %s, Z31, Z%d", offset(64*v, "(R9)"), ky*vectors+v)
		}
		if ky < k-1 {
			a.op("ADDQ R10, R9")
		}
	}
	a.op("ADDQ $4, SI")
	a.op("ADDQ $4, DI")
	a.op("DECQ CX")
	a.op("JNZ entry")
	a.op("ADDQ R11, R8")
	a.op("DECQ DX")
	a.op("JNZ image")
	for i := range k * vectors {
		a.op("VMOVUPS Z%d, %d(R13)", i, 64*i)
	}
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}

// poolBackRoutine writes convPoolBackKxV, the input gradient of the same
// convolution for one filter and one image: for each entry e, v[e] times
// the filter's values w (k rows of V vectors, laid out as the window:
// k·C values then zeros) added into the window of dx at arg[e], rows ×
// columns × channels like the input. Whole vectors are read and written:
// the lanes past k·C add v[e]·0, and dx must reach 16·V values past its
// last window row.
//
// Registers: Z0..Z(k·V−1) the filter, Z30 the values added into, Z31
// v[e]; SI v, DI arg, R8 dx, R9 the window's row, R10 rowX, R12 cBytes,
// R15 divOW, BX skip, CX the entries left.
func poolBackRoutine(b *strings.Builder, k, vectors int) {
	a := asm{b}
	name := fmt.Sprintf("convPoolBack%dx%d", k, vectors)
	fmt.Fprintf(b, "// func %s(v *float32, arg *float32, entries int, w *float32, dx *float32, rowX, divOW, skip, cBytes int)\n", name)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-72\n", name)
	a.op("MOVQ w+24(FP), AX")
	for i := range k * vectors {
		a.op("VMOVUPS %d(AX), Z%d", 64*i, i)
	}
	a.op("MOVQ v+0(FP), SI")
	a.op("MOVQ arg+8(FP), DI")
	a.op("MOVQ entries+16(FP), CX")
	a.op("MOVQ dx+32(FP), R8")
	a.op("MOVQ rowX+40(FP), R10")
	a.op("MOVQ divOW+48(FP), R15")
	a.op("MOVQ skip+56(FP), BX")
	a.op("MOVQ cBytes+64(FP), R12")
	a.label("entry")
	a.op("VBROADCASTSS (SI), Z31")
	a.op("MOVLQZX (DI), AX")
	windowAddress(a, "R8")
	for ky := range k {
		for v := range vectors {
			mem := offset(64*v, "(R9)")
			a.op("VMOVUPS %s, Z30", mem)
			a.op("VFMADD231PS Z%d, Z31, Z30", ky*vectors+v)
			a.op("VMOVUPS Z30, %s", mem)
		}
		if ky < k-1 {
			a.op("ADDQ R10, R9")
		}
	}
	a.op("ADDQ $4, SI")
	a.op("ADDQ $4, DI")
	a.op("DECQ CX")
	a.op("JNZ entry")
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}
