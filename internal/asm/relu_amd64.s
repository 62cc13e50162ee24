//go:build !purego

#include "textflag.h"

// func reluGradFloat32(y, grad, dx *float32, n int)
TEXT ·reluGradFloat32(SB), NOSPLIT, $0-32
	MOVQ   y+0(FP), SI
	MOVQ   grad+8(FP), BX
	MOVQ   dx+16(FP), DI
	MOVQ   n+24(FP), CX
	VXORPS Z7, Z7, Z7
	SHRQ   $4, CX
	JE     done

loop:
	VCMPPS    $0x11, (SI), Z7, K1 // 0 < y (LT_OQ): false for a NaN
	VMOVUPS.Z (BX), K1, Z0
	VMOVUPS   Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $64, BX
	ADDQ      $64, DI
	DECQ      CX
	JNE       loop

done:
	VZEROUPPER
	RET
