package main

import (
	"fmt"
	"strings"
)

// rowsRoutine writes gemmRowsR: C[i, j] = Σ_p A[i, p]·B[p, j] (+ C[i, j])
// for R rows of C and n columns, 64 columns a pass (R×4 accumulators),
// then 16 at a time, the last ones masked. Each C entry is one chain of
// fused multiply-adds over p in order, whatever the tile, so a row's
// values do not depend on the rows computed beside it.
//
// Registers: AX, R8 A's rows 0 and 3 at p (BX = lda in bytes); SI B's
// row p (DX = ldb); R12, DI the pass's first columns of B and C (R9 =
// ldc); R10 the columns left; CX the count of p; R14, R15 C's rows.
func rowsRoutine(b *strings.Builder, rows int) {
	a := asm{b}
	fmt.Fprintf(b, "// func gemmRows%d(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)\n", rows)
	fmt.Fprintf(b, "TEXT ·gemmRows%d(SB), NOSPLIT, $0-65\n", rows)
	a.op("MOVQ a+0(FP), R13")
	a.op("MOVQ lda+8(FP), BX")
	a.op("SHLQ $2, BX")
	a.op("MOVQ b+16(FP), R12")
	a.op("MOVQ ldb+24(FP), DX")
	a.op("SHLQ $2, DX")
	a.op("MOVQ c+32(FP), DI")
	a.op("MOVQ ldc+40(FP), R9")
	a.op("SHLQ $2, R9")
	a.op("MOVQ n+56(FP), R10")
	rowsPass(a, rows, "wide", 4)
	rowsPass(a, rows, "narrow", 1)
	a.label("done")
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}

// rowsAcc is gemmRowsR's accumulator of row r and vector v of a pass.
func rowsAcc(r, v int) string { return fmt.Sprintf("Z%d", r*4+v) }

// rowsPass writes a pass of gemmRowsR over as many columns as vectors
// hold (4: 64 columns, while at least 64 are left; 1: 16, the last ones
// masked), looping back to label until the columns run out.
func rowsPass(a asm, rows int, label string, vectors int) {
	aRow := []string{"(AX)", "(AX)(BX*1)", "(AX)(BX*2)", "(R8)", "(R8)(BX*1)"}
	v4 := vectors == 4
	a.label(label)
	if v4 {
		a.op("CMPQ R10, $64")
		a.op("JLT narrow")
	} else {
		a.op("CMPQ R10, $0")
		a.op("JLE done")
		a.op("MOVQ $0xFFFF, R14")
		a.op("CMPQ R10, $16")
		a.op("JGE masked")
		a.op("MOVQ R10, CX")
		a.op("MOVQ $1, R14")
		a.op("SHLQ CX, R14")
		a.op("DECQ R14")
		a.label("masked")
		a.op("KMOVW R14, K1")
	}
	for r := range rows {
		for v := range vectors {
			a.op("VXORPS %s, %s, %s", rowsAcc(r, v), rowsAcc(r, v), rowsAcc(r, v))
		}
	}
	a.op("MOVQ R13, AX")
	if rows > 3 {
		a.op("LEAQ (R13)(BX*2), R8")
		a.op("ADDQ BX, R8")
	}
	a.op("MOVQ R12, SI")
	a.op("MOVQ k+48(FP), CX")
	a.label(label + "k")
	if v4 {
		// B's rows lie ldb apart, too many streams for the hardware's
		// prefetcher: fetch the row's next pass ahead.
		for v := range 4 {
			a.op("PREFETCHT0 %d(SI)", 1024+64*v)
		}
		for v := range 4 {
			a.op("VMOVUPS %d(SI), Z%d", 64*v, 20+v)
		}
	} else {
		a.op("VMOVUPS.Z (SI), K1, Z20")
	}
	for r := range rows {
		z := 24 + r%2
		a.op("VBROADCASTSS %s, Z%d", aRow[r], z)
		for v := range vectors {
			a.op("VFMADD231PS Z%d, Z%d, %s", 20+v, z, rowsAcc(r, v))
		}
	}
	a.op("ADDQ $4, AX")
	if rows > 3 {
		a.op("ADDQ $4, R8")
	}
	a.op("ADDQ DX, SI")
	a.op("DECQ CX")
	a.op("JNZ %sk", label)
	rowsStore(a, rows, label, vectors)
}

// rowsStore writes the end of a gemmRowsR pass: C's entries added to the
// accumulators if addC, the accumulators stored, and B and C advanced to
// the next pass's columns.
func rowsStore(a asm, rows int, label string, vectors int) {
	cRow := []string{"(R14)", "(R14)(R9*1)", "(R14)(R9*2)", "(R15)", "(R15)(R9*1)"}
	v4 := vectors == 4
	a.op("MOVQ DI, R14")
	if rows > 3 {
		a.op("LEAQ (DI)(R9*2), R15")
		a.op("ADDQ R9, R15")
	}
	a.op("CMPB addC+64(FP), $0")
	a.op("JEQ %sstore", label)
	for r := range rows {
		for v := range vectors {
			if v4 {
				a.op("VADDPS %s, %s, %s", offset(64*v, cRow[r]), rowsAcc(r, v), rowsAcc(r, v))
			} else {
				a.op("VMOVUPS.Z %s, K1, Z26", cRow[r])
				a.op("VADDPS Z26, %s, %s", rowsAcc(r, v), rowsAcc(r, v))
			}
		}
	}
	a.label(label + "store")
	for r := range rows {
		for v := range vectors {
			if v4 {
				a.op("VMOVUPS %s, %s", rowsAcc(r, v), offset(64*v, cRow[r]))
			} else {
				a.op("VMOVUPS %s, K1, %s", rowsAcc(r, v), cRow[r])
			}
		}
	}
	a.op("ADDQ $%d, R12", 64*vectors)
	a.op("ADDQ $%d, DI", 64*vectors)
	a.op("SUBQ $%d, R10", 16*vectors)
	a.op("JMP %s", label)
}

// dotsRoutine writes gemmDotsRAxRB: for RA rows of A and RB rows of B, all
// running along p, part[r][s][l] += Σ A[r, p]·B[s, p] over the p ≡ l
// (mod 16) of the k given, sixteen lanes per entry, the last p masked.
// Each lane is one chain of fused multiply-adds over p in order, whatever
// the tile.
//
// Registers: AX, R8 A's rows 0 and 3 (BX = lda in bytes); SI, R9 B's
// rows 0 and 3 (DX = ldb); DI part (R10 = ldp·64 bytes, an A row's
// entries); CX the p left.
func dotsRoutine(b *strings.Builder, ra, rb int) {
	a := asm{b}
	name := fmt.Sprintf("gemmDots%dx%d", ra, rb)
	fmt.Fprintf(b, "// func %s(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int)\n", name)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-56\n", name)
	a.op("MOVQ a+0(FP), AX")
	a.op("MOVQ lda+8(FP), BX")
	a.op("SHLQ $2, BX")
	a.op("MOVQ b+16(FP), SI")
	a.op("MOVQ ldb+24(FP), DX")
	a.op("SHLQ $2, DX")
	a.op("MOVQ part+32(FP), DI")
	a.op("MOVQ ldp+40(FP), R10")
	a.op("SHLQ $6, R10")
	a.op("MOVQ k+48(FP), CX")
	if ra > 3 {
		a.op("LEAQ (AX)(BX*2), R8")
		a.op("ADDQ BX, R8")
	}
	if rb > 3 {
		a.op("LEAQ (SI)(DX*2), R9")
		a.op("ADDQ DX, R9")
	}
	aRow := []string{"(AX)", "(AX)(BX*1)", "(AX)(BX*2)", "(R8)"}
	bRow := []string{"(SI)", "(SI)(DX*1)", "(SI)(DX*2)", "(R9)", "(R9)(DX*1)"}
	acc := func(r, s int) string { return fmt.Sprintf("Z%d", r*5+s) }
	parts := func(load bool) {
		a.op("MOVQ DI, R11")
		a.lanes(ra, rb, "R11", "R10", load)
	}
	body := func(masked bool) {
		load := func(src string, z int) {
			if masked {
				a.op("VMOVUPS.Z %s, K1, Z%d", src, z)
			} else {
				a.op("VMOVUPS %s, Z%d", src, z)
			}
		}
		for r := range ra {
			load(aRow[r], 20+r)
		}
		for s := range rb {
			load(bRow[s], 24+s)
			for r := range ra {
				a.op("VFMADD231PS Z%d, Z%d, %s", 20+r, 24+s, acc(r, s))
			}
		}
		a.op("ADDQ $64, AX")
		if ra > 3 {
			a.op("ADDQ $64, R8")
		}
		a.op("ADDQ $64, SI")
		if rb > 3 {
			a.op("ADDQ $64, R9")
		}
	}
	parts(true)
	a.label("loop")
	a.op("CMPQ CX, $16")
	a.op("JLT tail")
	body(false)
	a.op("SUBQ $16, CX")
	a.op("JMP loop")
	a.label("tail")
	a.op("TESTQ CX, CX")
	a.op("JEQ store")
	a.op("MOVQ $1, R12")
	a.op("SHLQ CX, R12")
	a.op("DECQ R12")
	a.op("KMOVW R12, K1")
	body(true)
	a.label("store")
	parts(false)
	a.op("VZEROUPPER")
	a.op("RET")
	b.WriteString("\n")
}
