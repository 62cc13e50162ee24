//go:build !purego

#include "textflag.h"

// func adamFloat64(x, grad, m, v *float64, n int, k *AdamConsts)
//
// AdamConsts: beta1, 1−beta1, beta2, 1−beta2, c1, c2, lr, eps at 0, 8, …, 56.
TEXT ·adamFloat64(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), DI
	MOVQ         grad+8(FP), SI
	MOVQ         m+16(FP), R8
	MOVQ         v+24(FP), R9
	MOVQ         n+32(FP), CX
	MOVQ         k+40(FP), AX
	VBROADCASTSD 0(AX), Z8   // beta1
	VBROADCASTSD 8(AX), Z9   // 1 − beta1
	VBROADCASTSD 16(AX), Z10 // beta2
	VBROADCASTSD 24(AX), Z11 // 1 − beta2
	VBROADCASTSD 32(AX), Z12 // c1
	VBROADCASTSD 40(AX), Z13 // c2
	VBROADCASTSD 48(AX), Z14 // lr
	VBROADCASTSD 56(AX), Z15 // eps
	SHRQ         $3, CX
	JE           done

loop:
	VMOVUPD (SI), Z0     // g
	VMULPD  (R8), Z8, Z1 // beta1·m
	VMULPD  Z0, Z9, Z2   // (1−beta1)·g
	VADDPD  Z2, Z1, Z1   // m
	VMOVUPD Z1, (R8)
	VMULPD  Z0, Z11, Z3  // (1−beta2)·g
	VMULPD  Z0, Z3, Z3   // ·g
	VMULPD  (R9), Z10, Z4 // beta2·v
	VADDPD  Z3, Z4, Z4   // v
	VMOVUPD Z4, (R9)
	VDIVPD  Z12, Z1, Z1  // m/c1
	VMULPD  Z1, Z14, Z1  // lr·(m/c1)
	VDIVPD  Z13, Z4, Z4  // v/c2
	VSQRTPD Z4, Z4
	VADDPD  Z15, Z4, Z4  // sqrt(v/c2) + eps
	VDIVPD  Z4, Z1, Z1   // the step
	VMOVUPD (DI), Z5
	VSUBPD  Z1, Z5, Z5   // x − step
	VMOVUPD Z5, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	ADDQ    $64, R8
	ADDQ    $64, R9
	DECQ    CX
	JNE     loop

done:
	VZEROUPPER
	RET
