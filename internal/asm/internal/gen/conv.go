package main

import (
	"fmt"
	"strings"
)

// tapRowsRoutine writes convTapVRowsR, a convolution's product read from
// its input rather than from patches: for R rows r of the filters w and
// V vectors v of 16 columns j, C[r, v, j] = Σ_t w[r, t]·x[offs[t] + v·stepX
// + j] over the taps t in order, offs[t] the byte offset of tap t from
// the first input of the first vector's output row, vector v's entries
// stepC bytes after the one before it in each row of C and masked by the
// 16 bits of masks from bit 16·v. An output row of 17 to 32 columns is
// two vectors 64 bytes apart; rows of up to 16 are a vector each, stepX
// an input row and stepC an output row apart. Each entry is one chain of
// fused multiply-adds over t in order, as gemmRows makes it from the
// patches.
//
// Registers: AX, R8, R9, R10 w's rows 0, 3, 6, 9 at t (BX = ldw in bytes);
// SI x; R15 offs at t; R13 the tap's first input, R12 stepX; CX the taps
// left; DI, R11, R12, R13 C's rows 0, 3, 6, 9 (DX = ldc in bytes, R14
// stepC).
func tapRowsRoutine(b *strings.Builder, vectors, rows int) {
	a := asm{b}
	name := fmt.Sprintf("convTap%dRows%d", vectors, rows)
	fmt.Fprintf(b, "// func %s(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks, stepX, stepC int)\n", name)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-80\n", name)
	a.op("MOVQ w+0(FP), AX")
	a.op("MOVQ ldw+8(FP), BX")
	a.op("SHLQ $2, BX")
	a.op("MOVQ x+16(FP), SI")
	a.op("MOVQ offs+24(FP), R15")
	a.op("MOVQ k+32(FP), CX")
	a.op("MOVQ masks+56(FP), R14")
	for v := range vectors {
		if v > 0 {
			a.op("SHRQ $16, R14")
		}
		a.op("KMOVW R14, K%d", v+1)
	}
	a.op("MOVQ stepX+64(FP), R12")
	wBase := []string{"AX", "R8", "R9", "R10"}
	for g := 1; g*3 < rows; g++ {
		a.op("LEAQ (%s)(BX*2), %s", wBase[g-1], wBase[g])
		a.op("ADDQ BX, %s", wBase[g])
	}
	acc := func(r, v int) string { return fmt.Sprintf("Z%d", vectors*r+v) }
	for r := range rows {
		for v := range vectors {
			a.op("VXORPS %s, %s, %s", acc(r, v), acc(r, v), acc(r, v))
		}
	}
	a.label("tap")
	a.op("MOVQ (R15), R14")
	a.op("ADDQ $8, R15")
	a.op("LEAQ (SI)(R14*1), R13")
	for v := range vectors {
		mem := []string{"(R13)", "(R13)(R12*1)", "(R13)(R12*2)", "(R13)(R12*2)"}[v]
		if v == 3 {
			a.op("ADDQ R12, R13")
		}
		a.op("VMOVUPS.Z %s, K%d, Z%d", mem, v+1, 20+v)
	}
	for r := range rows {
		z := 24 + r%2
		a.op("VBROADCASTSS %s, Z%d", tapRow(wBase, r, "BX"), z)
		for v := range vectors {
			a.op("VFMADD231PS Z%d, Z%d, %s", 20+v, z, acc(r, v))
		}
	}
	for g := 0; g*3 < rows; g++ {
		a.op("ADDQ $4, %s", wBase[g])
	}
	a.op("DECQ CX")
	a.op("JNZ tap")
	tapStore(a, vectors, rows, acc)
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}

// tapStore writes the end of convTapVRowsR: the accumulators (acc(r, v)
// holds row r's vector v) stored to C under their vectors' masks.
func tapStore(a asm, vectors, rows int, acc func(r, v int) string) {
	a.op("MOVQ c+40(FP), DI")
	a.op("MOVQ ldc+48(FP), DX")
	a.op("SHLQ $2, DX")
	a.op("MOVQ stepC+72(FP), R14")
	cBase := []string{"DI", "R11", "R12", "R13"}
	for g := 1; g*3 < rows; g++ {
		a.op("LEAQ (%s)(DX*2), %s", cBase[g-1], cBase[g])
		a.op("ADDQ DX, %s", cBase[g])
	}
	for v := range vectors {
		if v > 0 {
			for g := 0; g*3 < rows; g++ {
				a.op("ADDQ R14, %s", cBase[g])
			}
		}
		for r := range rows {
			a.op("VMOVUPS %s, K%d, %s", acc(r, v), v+1, tapRow(cBase, r, "DX"))
		}
	}
}

// tapRow is the operand of row r of a matrix whose rows lie stride apart,
// with a base register for each three rows.
func tapRow(bases []string, r int, stride string) string {
	base := bases[r/3]
	switch r % 3 {
	case 1:
		return fmt.Sprintf("(%s)(%s*1)", base, stride)
	case 2:
		return fmt.Sprintf("(%s)(%s*2)", base, stride)
	}
	return "(" + base + ")"
}

// tapDotsRoutine writes convTapVDotsRAxRB, a convolution's filter
// gradient read from its input rather than from patches: for RA rows r of
// the output gradient g (rows of positions, an output row V vectors of 16
// columns, masked by the 16 bits of masks from bit 16·v) and RB taps s
// (byte offsets offs[s] from an output row's first input), over images ×
// rows output rows, part[r][s][l] += Σ g[r, j]·x[offs[s] + j] over the
// columns j ≡ l (mod 16) of each output row. Each lane is one chain of
// fused multiply-adds, output row by output row, j = l before j = l + 16.
// An "output row" is whatever the caller steps over: models/ops also walks
// an image's positions sixteen at a time, its rows laid end to end.
//
// Registers: AX, R8 g's rows 0 and 3 (BX = ldg in bytes); SI, DI, R9,
// R10, R11 the taps' inputs; CX the output rows left in the image, DX
// the images left; R12 the bytes from one output row to the next in g,
// R13 in x; R14 the bytes from an image's last output row's input to
// the next image's first, R15 the same in g.
func tapDotsRoutine(b *strings.Builder, vectors, ra, rb int) {
	a := asm{b}
	name := fmt.Sprintf("convTap%dDots%dx%d", vectors, ra, rb)
	fmt.Fprintf(b, "// func %s(gm *float32, ldg int, x *float32, offs *int, part *float32, ldp, images, rows, rowG, rowX, imageX, imageG, masks int)\n", name)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-104\n", name)
	a.op("MOVQ masks+96(FP), R14")
	for v := range vectors {
		if v > 0 {
			a.op("SHRQ $16, R14")
		}
		a.op("KMOVW R14, K%d", v+1)
	}
	a.op("MOVQ gm+0(FP), AX")
	a.op("MOVQ ldg+8(FP), BX")
	a.op("SHLQ $2, BX")
	if ra > 3 {
		a.op("LEAQ (AX)(BX*2), R8")
		a.op("ADDQ BX, R8")
	}
	taps := []string{"SI", "DI", "R9", "R10", "R11"}
	a.op("MOVQ offs+24(FP), R15")
	for s := range rb {
		a.op("MOVQ x+16(FP), %s", taps[s])
		a.op("ADDQ %d(R15), %s", 8*s, taps[s])
	}
	acc := func(r, s int) string { return fmt.Sprintf("Z%d", r*5+s) }
	parts := func(load bool) {
		a.op("MOVQ part+32(FP), R15")
		a.op("MOVQ ldp+40(FP), R12")
		a.op("SHLQ $6, R12")
		a.lanes(ra, rb, "R15", "R12", load)
	}
	parts(true)
	a.op("MOVQ rowG+64(FP), R12")
	a.op("MOVQ rowX+72(FP), R13")
	a.op("MOVQ imageX+80(FP), R14")
	a.op("MOVQ imageG+88(FP), R15")
	a.op("MOVQ images+48(FP), DX")
	gRow := []string{"(AX)", "(AX)(BX*1)", "(AX)(BX*2)", "(R8)", "(R8)(BX*1)"}
	a.label("image")
	a.op("MOVQ rows+56(FP), CX")
	a.label("row")
	for v := range vectors {
		k := fmt.Sprintf("K%d", v+1)
		for r := range ra {
			a.op("VMOVUPS.Z %s, %s, Z%d", offset(64*v, gRow[r]), k, 25+r)
		}
		for s := range rb {
			z := 30 + s%2
			a.op("VMOVUPS.Z %s, %s, Z%d", offset(64*v, "("+taps[s]+")"), k, z)
			for r := range ra {
				a.op("VFMADD231PS Z%d, Z%d, %s", 25+r, z, acc(r, s))
			}
		}
	}
	a.op("ADDQ R12, AX")
	if ra > 3 {
		a.op("ADDQ R12, R8")
	}
	for s := range rb {
		a.op("ADDQ R13, %s", taps[s])
	}
	a.op("DECQ CX")
	a.op("JNZ row")
	for s := range rb {
		a.op("ADDQ R14, %s", taps[s])
	}
	a.op("ADDQ R15, AX")
	if ra > 3 {
		a.op("ADDQ R15, R8")
	}
	a.op("DECQ DX")
	a.op("JNZ image")
	parts(false)
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}

// tapBackRoutine writes convTapBackO, a convolution's input gradient
// read back into shifted planes rather than through patches: for one
// vector of 16 output positions, masked by mask, of O filters' output
// gradients grad (rows of ldg values), and each tap t of taps (the rows
// of wt, O values each: the filters' values of that tap), the tap's
// gradient Σ_f wt[t, f]·grad[f] — one chain of fused multiply-adds over f
// in order — added into dxs at byte offset offs[t]. Eight taps at a
// time, then one. The caller orders the taps so that no two of eight
// add into the same values (a masked store does not forward to a load
// right after it).
//
// Registers: Z8..Z(8+O−1) the output gradients, Z0..Z7 the taps' sums,
// Z31 the values they add into; SI grad, BX ldg in bytes, DI wt's row, R8 offs, R9
// dxs, R10 a tap's offset, CX the taps left.
func tapBackRoutine(b *strings.Builder, o int) {
	a := asm{b}
	name := fmt.Sprintf("convTapBack%d", o)
	fmt.Fprintf(b, "// func %s(grad *float32, ldg int, wt *float32, taps int, offs *int, dxs *float32, mask int)\n", name)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-56\n", name)
	a.op("MOVQ mask+48(FP), AX")
	a.op("KMOVW AX, K1")
	a.op("MOVQ grad+0(FP), SI")
	a.op("MOVQ ldg+8(FP), BX")
	a.op("SHLQ $2, BX")
	for f := range o {
		a.op("VMOVUPS.Z (SI), K1, Z%d", 8+f)
		if f < o-1 {
			a.op("ADDQ BX, SI")
		}
	}
	a.op("MOVQ wt+16(FP), DI")
	a.op("MOVQ taps+24(FP), CX")
	a.op("MOVQ offs+32(FP), R8")
	a.op("MOVQ dxs+40(FP), R9")
	for _, group := range []int{8, 1} {
		loop := fmt.Sprintf("taps%d", group)
		done := fmt.Sprintf("done%d", group)
		a.label(loop)
		a.op("CMPQ CX, $%d", group)
		a.op("JLT %s", done)
		for f := range o {
			for i := range group {
				mem := offset(4*(o*i+f), "(DI)")
				if f == 0 {
					a.op("VMULPS.BCST %s, Z8, Z%d", mem, i)
				} else {
					a.op("VFMADD231PS.BCST %s, Z%d, Z%d", mem, 8+f, i)
				}
			}
		}
		for i := range group {
			a.op("MOVQ %s, R10", offset(8*i, "(R8)"))
			a.op("VMOVUPS.Z (R9)(R10*1), K1, Z31")
			a.op("VADDPS Z31, Z%d, Z%d", i, i)
			a.op("VMOVUPS Z%d, K1, (R9)(R10*1)", i)
		}
		a.op("ADDQ $%d, DI", 4*o*group)
		a.op("ADDQ $%d, R8", 8*group)
		a.op("SUBQ $%d, CX", group)
		a.op("JMP %s", loop)
		a.label(done)
	}
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}
