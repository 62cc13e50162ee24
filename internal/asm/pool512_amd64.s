//go:build !purego

#include "textflag.h"

// The 2×2 pool and its gradient with AVX-512 (pool.go).

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

// Lane k takes column 2k of 16 (even) or 2k+1 (odd).
DATA poolEven<>+0(SB)/4, $0
DATA poolEven<>+4(SB)/4, $2
DATA poolEven<>+8(SB)/4, $4
DATA poolEven<>+12(SB)/4, $6
DATA poolEven<>+16(SB)/4, $8
DATA poolEven<>+20(SB)/4, $10
DATA poolEven<>+24(SB)/4, $12
DATA poolEven<>+28(SB)/4, $14
DATA poolEven<>+32(SB)/4, $0
DATA poolEven<>+36(SB)/4, $0
DATA poolEven<>+40(SB)/4, $0
DATA poolEven<>+44(SB)/4, $0
DATA poolEven<>+48(SB)/4, $0
DATA poolEven<>+52(SB)/4, $0
DATA poolEven<>+56(SB)/4, $0
DATA poolEven<>+60(SB)/4, $0
GLOBL poolEven<>(SB), RODATA|NOPTR, $64

// RELU_BITS_Z turns V's lanes into reluBits of them (T scratch; Z27
// holds +Inf's bits): a negative value or a NaN becomes +0's bits.
#define RELU_BITS_Z(V, T) \
	VPSRAD  $31, V, T \
	VPANDND V, T, V   \
	VPSUBD  V, Z27, T \
	VPSRAD  $31, T, T \
	VPANDND V, T, V

// func pool2x2OctsFloat32(in, out []float32, arg []int32, w, oh, ow int)
//
// pool2x2Float32 for one plane, eight windows at a time: the windows'
// four inputs as reluBits, separated into their columns (VPERMD), and
// compared in greaterBits's order with a strict greater, so the same
// outputs and argmaxes to the bit; the last windows of a row masked.
//
// Registers: SI the pair of input rows (R9 = w in bytes), DI out's row,
// R8 arg's row; R10 the rows left, R11 the windows left in the row, R12
// the pair's first input position, R13 the chunk's, R14 its input
// address, CX its windows; Z26 poolEven, Z25 poolEven + 1 (odd), Z31
// poolIota (lane k of the idx: 2k), Z28 w, Z29 +0, Z30 −1.
TEXT ·pool2x2OctsFloat32(SB), NOSPLIT, $0-96
	MOVQ in_base+0(FP), SI
	MOVQ out_base+24(FP), DI
	MOVQ arg_base+48(FP), R8
	MOVQ w+72(FP), R9
	MOVQ oh+80(FP), R10
	MOVL $0x7f800000, AX
	VPBROADCASTD AX, Z27
	VPBROADCASTD R9, Z28
	VPXORD Z29, Z29, Z29
	VPTERNLOGD $0xff, Z30, Z30, Z30
	VMOVDQU32 poolEven<>(SB), Z26
	VPSUBD Z30, Z26, Z25 // + 1
	VPADDD Z26, Z29, Z31 // 2k in lane k
	SHLQ $2, R9
	XORQ R12, R12
	TESTQ R10, R10
	JEQ pdone

ppair:
	MOVQ ow+88(FP), R11
	MOVQ R12, R13
	MOVQ SI, R14

pchunk:
	MOVQ R11, CX
	CMPQ CX, $8
	JLE  pmasks
	MOVQ $8, CX

pmasks:
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1 // the chunk's windows
	MOVL $1, AX
	SHLL CX, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K3 // their inputs in a row

	VMOVUPS.Z (R14), K3, Z0
	VMOVUPS.Z (R14)(R9*1), K3, Z1
	RELU_BITS_Z(Z0, Z8)
	RELU_BITS_Z(Z1, Z8)
	VPERMD Z0, Z26, Z2 // r0[j]
	VPERMD Z0, Z25, Z3 // r0[j+1]
	VPERMD Z1, Z26, Z4 // r1[j]
	VPERMD Z1, Z25, Z5 // r1[j+1]
	VPBROADCASTD R13, Z10
	VPADDD Z31, Z10, Z10 // r0[j]'s position

	VMOVDQA32 Z29, Z6 // best: +0's bits
	VMOVDQA32 Z30, Z7 // at: −1
	VPCMPGTD  Z6, Z2, K2
	VMOVDQA32 Z2, K2, Z6
	VMOVDQA32 Z10, K2, Z7
	VPSUBD    Z30, Z10, Z11 // + 1
	VPCMPGTD  Z6, Z3, K2
	VMOVDQA32 Z3, K2, Z6
	VMOVDQA32 Z11, K2, Z7
	VPADDD    Z28, Z10, Z11 // + w
	VPCMPGTD  Z6, Z4, K2
	VMOVDQA32 Z4, K2, Z6
	VMOVDQA32 Z11, K2, Z7
	VPSUBD    Z30, Z11, Z11 // + w + 1
	VPCMPGTD  Z6, Z5, K2
	VMOVDQA32 Z5, K2, Z6
	VMOVDQA32 Z11, K2, Z7
	VMOVDQU32 Z6, K1, (DI)
	VMOVDQU32 Z7, K1, (R8)

	LEAQ (DI)(CX*4), DI
	LEAQ (R8)(CX*4), R8
	LEAQ (R14)(CX*8), R14
	LEAQ (R13)(CX*2), R13
	SUBQ CX, R11
	JNZ  pchunk

	LEAQ (SI)(R9*2), SI
	MOVQ w+72(FP), AX
	LEAQ (R12)(AX*2), R12
	DECQ R10
	JNZ  ppair

pdone:
	VZEROUPPER
	RET
