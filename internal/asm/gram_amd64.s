//go:build !purego

#include "textflag.h"

// Z(4i+j) holds the eight lanes of ⟨a_i, b_j⟩ in every routine below;
// Z16-Z19 hold the a rows' eight values of the step, Z20-Z23 the b
// rows'.

#define ZERO16 \
	VXORPD Z0, Z0, Z0 \
	VXORPD Z1, Z1, Z1 \
	VXORPD Z2, Z2, Z2 \
	VXORPD Z3, Z3, Z3 \
	VXORPD Z4, Z4, Z4 \
	VXORPD Z5, Z5, Z5 \
	VXORPD Z6, Z6, Z6 \
	VXORPD Z7, Z7, Z7 \
	VXORPD Z8, Z8, Z8 \
	VXORPD Z9, Z9, Z9 \
	VXORPD Z10, Z10, Z10 \
	VXORPD Z11, Z11, Z11 \
	VXORPD Z12, Z12, Z12 \
	VXORPD Z13, Z13, Z13 \
	VXORPD Z14, Z14, Z14 \
	VXORPD Z15, Z15, Z15

#define FMA4x4 \
	VFMADD231PD Z20, Z16, Z0 \
	VFMADD231PD Z21, Z16, Z1 \
	VFMADD231PD Z22, Z16, Z2 \
	VFMADD231PD Z23, Z16, Z3 \
	VFMADD231PD Z20, Z17, Z4 \
	VFMADD231PD Z21, Z17, Z5 \
	VFMADD231PD Z22, Z17, Z6 \
	VFMADD231PD Z23, Z17, Z7 \
	VFMADD231PD Z20, Z18, Z8 \
	VFMADD231PD Z21, Z18, Z9 \
	VFMADD231PD Z22, Z18, Z10 \
	VFMADD231PD Z23, Z18, Z11 \
	VFMADD231PD Z20, Z19, Z12 \
	VFMADD231PD Z21, Z19, Z13 \
	VFMADD231PD Z22, Z19, Z14 \
	VFMADD231PD Z23, Z19, Z15

// STORE16 writes Z0-Z15 to the 128 lanes at R8.
#define STORE16 \
	VMOVUPD Z0, 0(R8) \
	VMOVUPD Z1, 64(R8) \
	VMOVUPD Z2, 128(R8) \
	VMOVUPD Z3, 192(R8) \
	VMOVUPD Z4, 256(R8) \
	VMOVUPD Z5, 320(R8) \
	VMOVUPD Z6, 384(R8) \
	VMOVUPD Z7, 448(R8) \
	VMOVUPD Z8, 512(R8) \
	VMOVUPD Z9, 576(R8) \
	VMOVUPD Z10, 640(R8) \
	VMOVUPD Z11, 704(R8) \
	VMOVUPD Z12, 768(R8) \
	VMOVUPD Z13, 832(R8) \
	VMOVUPD Z14, 896(R8) \
	VMOVUPD Z15, 960(R8)

// CVT32 loads the a rows' eight float32 values at BX, converted.
#define CVT32 \
	VCVTPS2PD (SI)(BX*1), Z16 \
	VCVTPS2PD (R10)(BX*1), Z17 \
	VCVTPS2PD (R11)(BX*1), Z18 \
	VCVTPS2PD (R12)(BX*1), Z19

// SCALE_A and SCALE_B multiply the a or b rows' values by f (Z24).
#define SCALE_A \
	VMULPD Z24, Z16, Z16 \
	VMULPD Z24, Z17, Z17 \
	VMULPD Z24, Z18, Z18 \
	VMULPD Z24, Z19, Z19

#define SCALE_B \
	VMULPD Z24, Z20, Z20 \
	VMULPD Z24, Z21, Z21 \
	VMULPD Z24, Z22, Z22 \
	VMULPD Z24, Z23, Z23

// LOAD_B32 and LOAD_B64 load the b rows' eight values at R9: float32
// (converted) or float64.
#define LOAD_B32 \
	VCVTPS2PD (DI)(R9*1), Z20 \
	VCVTPS2PD (R13)(R9*1), Z21 \
	VCVTPS2PD (AX)(R9*1), Z22 \
	VCVTPS2PD (DX)(R9*1), Z23

#define LOAD_B64 \
	VMOVUPD (DI)(R9*1), Z20 \
	VMOVUPD (R13)(R9*1), Z21 \
	VMOVUPD (AX)(R9*1), Z22 \
	VMOVUPD (DX)(R9*1), Z23

// func gramLanesFloat64(a, b *float64, ld, w int, lanes *[128]float64)
//
// BX is the column's offset in bytes, the same in every row.
TEXT ·gramLanesFloat64(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ ld+16(FP), DX
	SHLQ $3, DX
	MOVQ w+24(FP), CX
	MOVQ lanes+32(FP), R8
	LEAQ (SI)(DX*1), R9
	LEAQ (SI)(DX*2), R10
	LEAQ (R9)(DX*2), R11
	LEAQ (DI)(DX*1), R12
	LEAQ (DI)(DX*2), R13
	LEAQ (R12)(DX*2), AX
	ZERO16
	XORQ BX, BX
	SHRQ $3, CX
	JE   done

loop:
	VMOVUPD (SI)(BX*1), Z16
	VMOVUPD (R9)(BX*1), Z17
	VMOVUPD (R10)(BX*1), Z18
	VMOVUPD (R11)(BX*1), Z19
	VMOVUPD (DI)(BX*1), Z20
	VMOVUPD (R12)(BX*1), Z21
	VMOVUPD (R13)(BX*1), Z22
	VMOVUPD (AX)(BX*1), Z23
	FMA4x4
	ADDQ $64, BX
	DECQ CX
	JNE  loop

done:
	STORE16
	VZEROUPPER
	RET

// The routines below are gramLanesFloat64 for rows given by their
// addresses: the a rows float32 scores, converted exactly as they are
// read and multiplied by f, the b rows such scores or float64 positions
// read as they are. BX is the column's offset in the float32 rows, R9 in
// the b rows; Z24 holds f. Where f is 1 the first loop runs, without the
// products.

// func gramLanes32x32(a *[4]*float32, b *[4]*float32, w int, f float64, lanes *[128]float64)
TEXT ·gramLanes32x32(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), R8
	MOVQ         b+8(FP), R9
	MOVQ         w+16(FP), CX
	MOVQ         0(R8), SI
	MOVQ         8(R8), R10
	MOVQ         16(R8), R11
	MOVQ         24(R8), R12
	MOVQ         0(R9), DI
	MOVQ         8(R9), R13
	MOVQ         16(R9), AX
	MOVQ         24(R9), DX
	MOVQ         lanes+32(FP), R8
	VBROADCASTSD f+24(FP), Z24
	ZERO16
	MOVQ         f+24(FP), BX
	MOVQ         $0x3ff0000000000000, R9 // 1.0's bits
	CMPQ         BX, R9
	SETNE        R9
	XORQ         BX, BX
	SHRQ         $3, CX
	JE           gramLanes32x32done
	TESTB        R9, R9
	MOVQ         $0, R9
	JNE          gramLanes32x32scaled

gramLanes32x32plain:
	CVT32
	LOAD_B32
	FMA4x4
	ADDQ $32, BX
	ADDQ $32, R9
	DECQ CX
	JNE  gramLanes32x32plain
	JMP  gramLanes32x32done

gramLanes32x32scaled:
	CVT32
	SCALE_A
	LOAD_B32
	SCALE_B
	FMA4x4
	ADDQ $32, BX
	ADDQ $32, R9
	DECQ CX
	JNE  gramLanes32x32scaled

gramLanes32x32done:
	STORE16
	VZEROUPPER
	RET

// func gramLanes32x64(a *[4]*float32, b *[4]*float64, w int, f float64, lanes *[128]float64)
TEXT ·gramLanes32x64(SB), NOSPLIT, $0-40
	MOVQ         a+0(FP), R8
	MOVQ         b+8(FP), R9
	MOVQ         w+16(FP), CX
	MOVQ         0(R8), SI
	MOVQ         8(R8), R10
	MOVQ         16(R8), R11
	MOVQ         24(R8), R12
	MOVQ         0(R9), DI
	MOVQ         8(R9), R13
	MOVQ         16(R9), AX
	MOVQ         24(R9), DX
	MOVQ         lanes+32(FP), R8
	VBROADCASTSD f+24(FP), Z24
	ZERO16
	MOVQ         f+24(FP), BX
	MOVQ         $0x3ff0000000000000, R9 // 1.0's bits
	CMPQ         BX, R9
	SETNE        R9
	XORQ         BX, BX
	SHRQ         $3, CX
	JE           gramLanes32x64done
	TESTB        R9, R9
	MOVQ         $0, R9
	JNE          gramLanes32x64scaled

gramLanes32x64plain:
	CVT32
	LOAD_B64
	FMA4x4
	ADDQ $32, BX
	ADDQ $64, R9
	DECQ CX
	JNE  gramLanes32x64plain
	JMP  gramLanes32x64done

gramLanes32x64scaled:
	CVT32
	SCALE_A
	LOAD_B64
	FMA4x4
	ADDQ $32, BX
	ADDQ $64, R9
	DECQ CX
	JNE  gramLanes32x64scaled

gramLanes32x64done:
	STORE16
	VZEROUPPER
	RET
