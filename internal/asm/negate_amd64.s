//go:build !purego

#include "textflag.h"

// func negateFloat32(dst, src *float32, n int) (finite bool)
//
// Z7 sums x·0 over every x read: ±0 while they are finite, NaN from the
// first NaN or Inf on (negateInto's test).
TEXT ·negateFloat32(SB), NOSPLIT, $0-25
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVL         $0x80000000, AX
	VPBROADCASTD AX, Z6 // the sign bit
	VXORPS       Z7, Z7, Z7
	VXORPS       Z8, Z8, Z8
	SHRQ         $4, CX
	JE           done

loop:
	VMOVUPS     (SI), Z0
	VXORPS      Z6, Z0, Z1
	VMOVUPS     Z1, (DI)
	VFMADD231PS Z8, Z0, Z7
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNE         loop

done:
	VCMPPS     $0, Z8, Z7, K1 // EQ_OQ: false for a NaN lane
	KMOVW      K1, AX
	CMPW       AX, $0xffff
	SETEQ      finite+24(FP)
	VZEROUPPER
	RET
