//go:build !purego

#include "textflag.h"

// The gradients' transforms of Winograd's F(2×2, 3×3) (winograd.go),
// sixteen tiles or positions a vector, the last ones under a mask (K7).

// LANEMASK sets K7 to the lanes of the next vector of CX > 0 values
// left: all sixteen, or the first CX. It overwrites AX and BX.
#define LANEMASK \
	MOVL    $0xffff, BX \
	MOVL    $1, AX \
	SHLL    CX, AX \
	DECL    AX \
	CMPQ    CX, $16 \
	CMOVLGE BX, AX \
	KMOVW   AX, K7

// LOAD16 loads the 16 matrices' vectors from R12 on, R9 bytes apart
// (R11 = 3·R9), into Z0-Z15 under K7, and moves R12 past them.
#define LOAD16 \
	VMOVUPS.Z (R12), K7, Z0 \
	VMOVUPS.Z (R12)(R9*1), K7, Z1 \
	VMOVUPS.Z (R12)(R9*2), K7, Z2 \
	VMOVUPS.Z (R12)(R11*1), K7, Z3 \
	LEAQ      (R12)(R9*4), R12 \
	VMOVUPS.Z (R12), K7, Z4 \
	VMOVUPS.Z (R12)(R9*1), K7, Z5 \
	VMOVUPS.Z (R12)(R9*2), K7, Z6 \
	VMOVUPS.Z (R12)(R11*1), K7, Z7 \
	LEAQ      (R12)(R9*4), R12 \
	VMOVUPS.Z (R12), K7, Z8 \
	VMOVUPS.Z (R12)(R9*1), K7, Z9 \
	VMOVUPS.Z (R12)(R9*2), K7, Z10 \
	VMOVUPS.Z (R12)(R11*1), K7, Z11 \
	LEAQ      (R12)(R9*4), R12 \
	VMOVUPS.Z (R12), K7, Z12 \
	VMOVUPS.Z (R12)(R9*1), K7, Z13 \
	VMOVUPS.Z (R12)(R9*2), K7, Z14 \
	VMOVUPS.Z (R12)(R11*1), K7, Z15 \
	LEAQ      (R12)(R9*4), R12

// func winoGradTilesFloat32(z []float32, zs int, src []float32, idx []int32, ow int)
TEXT ·winoGradTilesFloat32(SB), NOSPLIT, $0-88
	MOVQ z_base+0(FP), DI
	MOVQ zs+24(FP), R9
	SHLQ $2, R9                // bytes between the ξ matrices
	MOVQ src_base+32(FP), SI
	MOVQ idx_base+56(FP), DX
	MOVQ idx_len+64(FP), CX
	MOVQ ow+80(FP), R8
	LEAQ (SI)(R8*4), R10       // the tiles' bottom rows
	LEAQ (R9)(R9*2), R11       // three ξ matrices
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z31       // the sign bit

gradloop:
	CMPQ CX, $0
	JLE  graddone
	LANEMASK
	VMOVDQU32.Z (DX), K7, Z8
	KMOVW K7, K1
	VGATHERDPS (SI)(Z8*4), K1, Z0   // a: top left
	KMOVW K7, K1
	VGATHERDPS 4(SI)(Z8*4), K1, Z1  // b: top right
	KMOVW K7, K1
	VGATHERDPS (R10)(Z8*4), K1, Z2  // c: bottom left
	KMOVW K7, K1
	VGATHERDPS 4(R10)(Z8*4), K1, Z3 // d: bottom right
	// The rows of A Ȳ: (a, b), (a+c, b+d), (a−c, b−d), (−c, −d).
	VADDPS Z2, Z0, Z4
	VADDPS Z3, Z1, Z5
	VSUBPS Z2, Z0, Z6
	VSUBPS Z3, Z1, Z7
	VXORPS Z31, Z2, Z2
	VXORPS Z31, Z3, Z3
	MOVQ DI, R12
	VMOVUPS Z0, K7, (R12)
	VADDPS  Z1, Z0, Z9
	VMOVUPS Z9, K7, (R12)(R9*1)
	VSUBPS  Z1, Z0, Z9
	VMOVUPS Z9, K7, (R12)(R9*2)
	VXORPS  Z31, Z1, Z9
	VMOVUPS Z9, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	VMOVUPS Z4, K7, (R12)
	VADDPS  Z5, Z4, Z9
	VMOVUPS Z9, K7, (R12)(R9*1)
	VSUBPS  Z5, Z4, Z9
	VMOVUPS Z9, K7, (R12)(R9*2)
	VXORPS  Z31, Z5, Z9
	VMOVUPS Z9, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	VMOVUPS Z6, K7, (R12)
	VADDPS  Z7, Z6, Z9
	VMOVUPS Z9, K7, (R12)(R9*1)
	VSUBPS  Z7, Z6, Z9
	VMOVUPS Z9, K7, (R12)(R9*2)
	VXORPS  Z31, Z7, Z9
	VMOVUPS Z9, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	VMOVUPS Z2, K7, (R12)
	VADDPS  Z3, Z2, Z9
	VMOVUPS Z9, K7, (R12)(R9*1)
	VSUBPS  Z3, Z2, Z9
	VMOVUPS Z9, K7, (R12)(R9*2)
	VXORPS  Z31, Z3, Z9
	VMOVUPS Z9, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  gradloop

graddone:
	VZEROUPPER
	RET

// func winoInputTilesFloat32(d []float32, ds, n int)
TEXT ·winoInputTilesFloat32(SB), NOSPLIT, $0-40
	MOVQ d_base+0(FP), DI
	MOVQ ds+24(FP), R9
	SHLQ $2, R9
	MOVQ n+32(FP), CX
	LEAQ (R9)(R9*2), R11
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z31

inloop:
	CMPQ CX, $0
	JLE  indone
	LANEMASK
	MOVQ DI, R12
	LOAD16
	// The rows of B D, by columns j: D_0j; (D_1j − D_2j) + D_3j;
	// (D_1j + D_2j) − D_0j; −D_3j.
	VSUBPS Z8, Z4, Z16
	VADDPS Z12, Z16, Z16
	VADDPS Z8, Z4, Z20
	VSUBPS Z0, Z20, Z20
	VXORPS Z31, Z12, Z24
	VSUBPS Z9, Z5, Z17
	VADDPS Z13, Z17, Z17
	VADDPS Z9, Z5, Z21
	VSUBPS Z1, Z21, Z21
	VXORPS Z31, Z13, Z25
	VSUBPS Z10, Z6, Z18
	VADDPS Z14, Z18, Z18
	VADDPS Z10, Z6, Z22
	VSUBPS Z2, Z22, Z22
	VXORPS Z31, Z14, Z26
	VSUBPS Z11, Z7, Z19
	VADDPS Z15, Z19, Z19
	VADDPS Z11, Z7, Z23
	VSUBPS Z3, Z23, Z23
	VXORPS Z31, Z15, Z27
	MOVQ DI, R12
	VMOVUPS Z0, K7, (R12)
	VSUBPS  Z2, Z1, Z28
	VADDPS  Z3, Z28, Z28
	VMOVUPS Z28, K7, (R12)(R9*1)
	VADDPS  Z2, Z1, Z29
	VSUBPS  Z0, Z29, Z29
	VMOVUPS Z29, K7, (R12)(R9*2)
	VXORPS  Z31, Z3, Z30
	VMOVUPS Z30, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	VMOVUPS Z16, K7, (R12)
	VSUBPS  Z18, Z17, Z28
	VADDPS  Z19, Z28, Z28
	VMOVUPS Z28, K7, (R12)(R9*1)
	VADDPS  Z18, Z17, Z29
	VSUBPS  Z16, Z29, Z29
	VMOVUPS Z29, K7, (R12)(R9*2)
	VXORPS  Z31, Z19, Z30
	VMOVUPS Z30, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	VMOVUPS Z20, K7, (R12)
	VSUBPS  Z22, Z21, Z28
	VADDPS  Z23, Z28, Z28
	VMOVUPS Z28, K7, (R12)(R9*1)
	VADDPS  Z22, Z21, Z29
	VSUBPS  Z20, Z29, Z29
	VMOVUPS Z29, K7, (R12)(R9*2)
	VXORPS  Z31, Z23, Z30
	VMOVUPS Z30, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	VMOVUPS Z24, K7, (R12)
	VSUBPS  Z26, Z25, Z28
	VADDPS  Z27, Z28, Z28
	VMOVUPS Z28, K7, (R12)(R9*1)
	VADDPS  Z26, Z25, Z29
	VSUBPS  Z24, Z29, Z29
	VMOVUPS Z29, K7, (R12)(R9*2)
	VXORPS  Z31, Z27, Z30
	VMOVUPS Z30, K7, (R12)(R11*1)
	LEAQ    (R12)(R9*4), R12
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  inloop

indone:
	VZEROUPPER
	RET

// func winoFoldFloat32(plane, d []float32, fold []int32)
TEXT ·winoFoldFloat32(SB), NOSPLIT, $0-72
	MOVQ plane_base+0(FP), DI
	MOVQ plane_len+8(FP), CX
	MOVQ d_base+24(FP), SI
	MOVQ fold_base+48(FP), DX
	MOVQ CX, R8
	SHLQ $2, R8                // bytes between fold's rows
	LEAQ (R8)(R8*2), R10
	VPXORD Z30, Z30, Z30

foldloop:
	CMPQ CX, $0
	JLE  folddone
	LANEMASK
	VXORPS Z0, Z0, Z0
	VMOVDQU32.Z (DX), K7, Z1
	VPCMPD  $5, Z30, Z1, K7, K1  // K1: within the mask and ≥ 0
	VXORPS  Z2, Z2, Z2
	VGATHERDPS (SI)(Z1*4), K1, Z2
	VADDPS  Z2, Z0, Z0
	VMOVDQU32.Z (DX)(R8*1), K7, Z1
	VPCMPD  $5, Z30, Z1, K7, K1  // K1: within the mask and ≥ 0
	VXORPS  Z2, Z2, Z2
	VGATHERDPS (SI)(Z1*4), K1, Z2
	VADDPS  Z2, Z0, Z0
	VMOVDQU32.Z (DX)(R8*2), K7, Z1
	VPCMPD  $5, Z30, Z1, K7, K1  // K1: within the mask and ≥ 0
	VXORPS  Z2, Z2, Z2
	VGATHERDPS (SI)(Z1*4), K1, Z2
	VADDPS  Z2, Z0, Z0
	VMOVDQU32.Z (DX)(R10*1), K7, Z1
	VPCMPD  $5, Z30, Z1, K7, K1  // K1: within the mask and ≥ 0
	VXORPS  Z2, Z2, Z2
	VGATHERDPS (SI)(Z1*4), K1, Z2
	VADDPS  Z2, Z0, Z0
	VMOVUPS Z0, K7, (DI)
	ADDQ $64, DI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  foldloop

folddone:
	VZEROUPPER
	RET

// func winoFilterTilesFloat32(dw, m []float32, ms int)
// dw (len/9 filters of 3×3) from the 16 summed products m[ξ·ms + f].
TEXT ·winoFilterTilesFloat32(SB), NOSPLIT, $0-56
	MOVQ dw_base+0(FP), DI
	MOVQ dw_len+8(FP), CX
	MOVQ m_base+24(FP), SI
	MOVQ ms+48(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R11
	MOVQ CX, AX
	MOVQ $0, DX
	MOVQ $9, BX
	DIVQ BX
	MOVQ AX, CX                // filters
	MOVL $0x3f000000, AX
	VPBROADCASTD AX, Z30       // ½
	MOVL $9, AX
	VPBROADCASTD AX, Z31
	VPMULLD ·lanes(SB), Z31, Z31 // 9·lane: each lane's filter

filterloop:
	CMPQ CX, $0
	JLE  filterdone
	LANEMASK
	MOVQ SI, R12
	LOAD16
	// The rows of Gᵀ M, by columns j: M_0j + (M_1j + M_2j)·½;
	// (M_1j − M_2j)·½; (M_1j + M_2j)·½ + M_3j.
	VADDPS Z8, Z4, Z28
	VMULPS Z30, Z28, Z28
	VADDPS Z28, Z0, Z16
	VADDPS Z12, Z28, Z24
	VSUBPS Z8, Z4, Z29
	VMULPS Z30, Z29, Z20
	VADDPS Z9, Z5, Z28
	VMULPS Z30, Z28, Z28
	VADDPS Z28, Z1, Z17
	VADDPS Z13, Z28, Z25
	VSUBPS Z9, Z5, Z29
	VMULPS Z30, Z29, Z21
	VADDPS Z10, Z6, Z28
	VMULPS Z30, Z28, Z28
	VADDPS Z28, Z2, Z18
	VADDPS Z14, Z28, Z26
	VSUBPS Z10, Z6, Z29
	VMULPS Z30, Z29, Z22
	VADDPS Z11, Z7, Z28
	VMULPS Z30, Z28, Z28
	VADDPS Z28, Z3, Z19
	VADDPS Z15, Z28, Z27
	VSUBPS Z11, Z7, Z29
	VMULPS Z30, Z29, Z23
	VADDPS Z18, Z17, Z28
	VMULPS Z30, Z28, Z28
	VADDPS Z28, Z16, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 0(DI)(Z31*4)
	VSUBPS Z18, Z17, Z29
	VMULPS Z30, Z29, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 4(DI)(Z31*4)
	VADDPS Z19, Z28, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 8(DI)(Z31*4)
	VADDPS Z22, Z21, Z28
	VMULPS Z30, Z28, Z28
	VADDPS Z28, Z20, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 12(DI)(Z31*4)
	VSUBPS Z22, Z21, Z29
	VMULPS Z30, Z29, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 16(DI)(Z31*4)
	VADDPS Z23, Z28, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 20(DI)(Z31*4)
	VADDPS Z26, Z25, Z28
	VMULPS Z30, Z28, Z28
	VADDPS Z28, Z24, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 24(DI)(Z31*4)
	VSUBPS Z26, Z25, Z29
	VMULPS Z30, Z29, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 28(DI)(Z31*4)
	VADDPS Z27, Z28, Z29
	KMOVW K7, K1
	VSCATTERDPS Z29, K1, 32(DI)(Z31*4)
	ADDQ $64, SI
	ADDQ $576, DI
	SUBQ $16, CX
	JMP  filterloop

filterdone:
	VZEROUPPER
	RET

// lanes are 0, 1, …, 15.
DATA ·lanes+0(SB)/4, $0
DATA ·lanes+4(SB)/4, $1
DATA ·lanes+8(SB)/4, $2
DATA ·lanes+12(SB)/4, $3
DATA ·lanes+16(SB)/4, $4
DATA ·lanes+20(SB)/4, $5
DATA ·lanes+24(SB)/4, $6
DATA ·lanes+28(SB)/4, $7
DATA ·lanes+32(SB)/4, $8
DATA ·lanes+36(SB)/4, $9
DATA ·lanes+40(SB)/4, $10
DATA ·lanes+44(SB)/4, $11
DATA ·lanes+48(SB)/4, $12
DATA ·lanes+52(SB)/4, $13
DATA ·lanes+56(SB)/4, $14
DATA ·lanes+60(SB)/4, $15
GLOBL ·lanes(SB), RODATA|NOPTR, $64
