//go:build !purego

#include "textflag.h"

// col2im a plane row at a time with AVX-512 (col2im.go).

// func col2imPlaneFloat32(cols *float32, ld int, plane *float32, h, w, k, oh, ow int)
//
// One input row at a time in a register: the row's values, plus each
// tap's patch-gradient row (ow values, loaded to the lanes kx… it falls
// on) in the order of the taps, added under the tap's mask, so that
// each value receives the additions of col2imRuns in its order; each
// patch-gradient value read is set to +0.
//
// Registers: R8 the channel's first tap row in cols (R9 = ld in bytes);
// DI the plane's row yi (R10); R11 ky; R13 the tap's values; CX kx; R14
// the mask of ow lanes; K2 the mask of w lanes; Z31 +0.
TEXT ·col2imPlaneFloat32(SB), NOSPLIT, $0-64
	MOVQ cols+0(FP), R8
	MOVQ ld+8(FP), R9
	SHLQ $2, R9
	MOVQ plane+16(FP), DI
	VPXORD Z31, Z31, Z31
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K2
	MOVQ ow+56(FP), CX
	MOVL $1, R14
	SHLL CX, R14
	DECL R14
	XORQ R10, R10

row:
	CMPQ R10, h+24(FP)
	JGE  done
	VMOVUPS.Z (DI), K2, Z0
	MOVQ R10, R11 // ky from max(0, yi − oh + 1)
	SUBQ oh+48(FP), R11
	INCQ R11
	TESTQ R11, R11
	JGE  taprow
	XORQ R11, R11

taprow: // to min(k − 1, yi)
	CMPQ R11, k+40(FP)
	JGE  store
	CMPQ R11, R10
	JG   store
	MOVQ  R11, AX // the tap row ky·k, at output row yi − ky
	IMULQ k+40(FP), AX
	IMULQ R9, AX
	LEAQ  (R8)(AX*1), R13
	MOVQ  R10, AX
	SUBQ  R11, AX
	IMULQ ow+56(FP), AX
	LEAQ  (R13)(AX*4), R13
	XORQ  CX, CX

tap:
	MOVL  R14, AX
	SHLL  CX, AX
	KMOVW AX, K1
	VMOVUPS.Z (R13), K1, Z1
	VADDPS    Z1, Z0, K1, Z0 // the plane's value the first operand, as in addRunsFloat32
	VMOVUPS   Z31, K1, (R13)
	ADDQ R9, R13 // the next tap's row, one lane further on
	SUBQ $4, R13
	INCQ CX
	CMPQ CX, k+40(FP)
	JLT  tap
	INCQ R11
	JMP  taprow

store:
	VMOVUPS Z0, K2, (DI)
	MOVQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI
	INCQ R10
	JMP  row

done:
	VZEROUPPER
	RET
