//go:build !purego

#include "textflag.h"

// Lane j of a row of 16 gradient values takes window j/2's output.
DATA poolPairs<>+0(SB)/4, $0
DATA poolPairs<>+4(SB)/4, $0
DATA poolPairs<>+8(SB)/4, $1
DATA poolPairs<>+12(SB)/4, $1
DATA poolPairs<>+16(SB)/4, $2
DATA poolPairs<>+20(SB)/4, $2
DATA poolPairs<>+24(SB)/4, $3
DATA poolPairs<>+28(SB)/4, $3
DATA poolPairs<>+32(SB)/4, $4
DATA poolPairs<>+36(SB)/4, $4
DATA poolPairs<>+40(SB)/4, $5
DATA poolPairs<>+44(SB)/4, $5
DATA poolPairs<>+48(SB)/4, $6
DATA poolPairs<>+52(SB)/4, $6
DATA poolPairs<>+56(SB)/4, $7
DATA poolPairs<>+60(SB)/4, $7
GLOBL poolPairs<>(SB), RODATA|NOPTR, $64

// 0, 1, …, 15: a row's columns from a chunk's first.
DATA poolIota<>+0(SB)/4, $0
DATA poolIota<>+4(SB)/4, $1
DATA poolIota<>+8(SB)/4, $2
DATA poolIota<>+12(SB)/4, $3
DATA poolIota<>+16(SB)/4, $4
DATA poolIota<>+20(SB)/4, $5
DATA poolIota<>+24(SB)/4, $6
DATA poolIota<>+28(SB)/4, $7
DATA poolIota<>+32(SB)/4, $8
DATA poolIota<>+36(SB)/4, $9
DATA poolIota<>+40(SB)/4, $10
DATA poolIota<>+44(SB)/4, $11
DATA poolIota<>+48(SB)/4, $12
DATA poolIota<>+52(SB)/4, $13
DATA poolIota<>+56(SB)/4, $14
DATA poolIota<>+60(SB)/4, $15
GLOBL poolIota<>(SB), RODATA|NOPTR, $64

// func pool2x2GradFloat32(dy []float32, arg []int32, dx []float32, w, oh, ow int)
//
// Eight windows at a time: their gradients and argmaxes spread to the 16
// columns they cover (VPERMPS, VPERMD), each column set to +0 + the
// gradient where the argmax is that position and to +0 elsewhere, both of
// the windows' rows stored whole.
//
// Registers: SI dy's row, R8 arg's row, DI dx's first row of the pair
// (R9 = w in bytes); R10 the row pairs left, R11 the windows left in the
// row, R12 the first input position of the chunk, CX its windows, R13
// scratch; Z29 +0, Z30 poolPairs, Z31 poolIota, Z28 w in every lane.
TEXT ·pool2x2GradFloat32(SB), NOSPLIT, $0-96
	MOVQ dy_base+0(FP), SI
	MOVQ arg_base+24(FP), R8
	MOVQ dx_base+48(FP), DI
	MOVQ w+72(FP), R9
	MOVQ oh+80(FP), R10
	VPXORD Z29, Z29, Z29
	VMOVDQU32 poolPairs<>(SB), Z30
	VMOVDQU32 poolIota<>(SB), Z31
	VPBROADCASTD R9, Z28
	SHLQ $2, R9
	XORQ R12, R12 // the pair's first input position: 2·oy·w
	TESTQ R10, R10
	JEQ done

pair:
	MOVQ ow+88(FP), R11
	MOVQ R12, R13 // the chunk's first input position
	MOVQ DI, R14  // the chunk's first column in dx

chunk:
	MOVQ R11, CX
	CMPQ CX, $8
	JLE  masks
	MOVQ $8, CX

masks:
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1 // the chunk's windows
	MOVL $1, AX
	SHLL CX, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K3 // their columns

	VMOVDQU32.Z (R8), K1, Z1
	VPERMD      Z1, Z30, Z2 // argmax of each column's window
	VMOVUPS.Z   (SI), K1, Z3
	VPERMPS     Z3, Z30, Z4
	VADDPS      Z4, Z29, Z4 // +0 + gradient, as adding into the cleared plane
	VPBROADCASTD R13, Z10
	VPADDD      Z31, Z10, Z10 // the first row's positions
	VPADDD      Z28, Z10, Z11 // the second's
	VPCMPEQD    Z10, Z2, K2
	VMOVAPS.Z   Z4, K2, Z5
	VMOVUPS     Z5, K3, (R14)
	VPCMPEQD    Z11, Z2, K2
	VMOVAPS.Z   Z4, K2, Z5
	VMOVUPS     Z5, K3, (R14)(R9*1)

	LEAQ (SI)(CX*4), SI
	LEAQ (R8)(CX*4), R8
	LEAQ (R14)(CX*8), R14
	LEAQ (R13)(CX*2), R13
	SUBQ CX, R11
	JNZ  chunk

	LEAQ (DI)(R9*2), DI
	MOVQ w+72(FP), AX
	LEAQ (R12)(AX*2), R12
	DECQ R10
	JNZ  pair

done:
	VZEROUPPER
	RET
