//go:build !purego

#include "textflag.h"

// func widenScaledFloat32(dst *float64, src *float32, n int, f float64) (finite bool)
//
// Z7 sums x·0 over every value x written: ±0 while they are finite, NaN
// from the first NaN or Inf on (the test of allFinite).
TEXT ·widenScaledFloat32(SB), NOSPLIT, $0-33
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD f+24(FP), Z6
	VXORPD       Z7, Z7, Z7
	VXORPD       Z8, Z8, Z8
	SHRQ         $4, CX
	JE           done

loop:
	VCVTPS2PD    (SI), Z0
	VCVTPS2PD    32(SI), Z1
	VMULPD       Z6, Z0, Z0
	VMULPD       Z6, Z1, Z1
	VMOVUPD      Z0, (DI)
	VMOVUPD      Z1, 64(DI)
	VFMADD231PD  Z8, Z0, Z7
	VFMADD231PD  Z8, Z1, Z7
	ADDQ         $64, SI
	ADDQ         $128, DI
	DECQ         CX
	JNE          loop

done:
	VCMPPD       $0, Z8, Z7, K1 // EQ_OQ: false for a NaN lane
	KMOVB        K1, AX
	CMPB         AX, $0xff
	SETEQ        finite+32(FP)
	VZEROUPPER
	RET
