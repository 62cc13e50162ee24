//go:build !purego

#include "textflag.h"

// func addRunsFloat32(plane, src []float32, runs []tapRun)
// tapRun is {pos, at, n int32}: 12 bytes.
TEXT ·addRunsFloat32(SB), NOSPLIT, $0-72
	MOVQ plane_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ runs_base+48(FP), R8
	MOVQ runs_len+56(FP), R9
	TESTQ R9, R9
	JE   done

run:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (SI)(AX*4), R10
	LEAQ (DI)(BX*4), R11

quad:
	CMPQ   CX, $4
	JL     single
	MOVUPS (R10), X0
	MOVUPS (R11), X1
	ADDPS  X0, X1       // plane + src, as the Go loop's d[i] += v
	MOVUPS X1, (R11)
	ADDQ   $16, R10
	ADDQ   $16, R11
	SUBQ   $4, CX
	JMP    quad

single:
	TESTQ CX, CX
	JE    next
	MOVSS (R10), X0
	MOVSS (R11), X1
	ADDSS X0, X1
	MOVSS X1, (R11)
	ADDQ  $4, R10
	ADDQ  $4, R11
	DECQ  CX
	JMP   single

next:
	ADDQ $12, R8
	DECQ R9
	JNE  run

done:
	RET

// func copyRunsFloat32(dst, plane []float32, runs []tapRun)
TEXT ·copyRunsFloat32(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ plane_base+24(FP), SI
	MOVQ runs_base+48(FP), R8
	MOVQ runs_len+56(FP), R9
	TESTQ R9, R9
	JE   done

run:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (DI)(AX*4), R11
	LEAQ (SI)(BX*4), R10

quad:
	CMPQ   CX, $4
	JL     single
	MOVUPS (R10), X0
	MOVUPS X0, (R11)
	ADDQ   $16, R10
	ADDQ   $16, R11
	SUBQ   $4, CX
	JMP    quad

single:
	TESTQ CX, CX
	JE    next
	MOVL  (R10), AX
	MOVL  AX, (R11)
	ADDQ  $4, R10
	ADDQ  $4, R11
	DECQ  CX
	JMP   single

next:
	ADDQ $12, R8
	DECQ R9
	JNE  run

done:
	RET

// func addRunsClearingFloat32(plane, src []float32, runs []tapRun)
TEXT ·addRunsClearingFloat32(SB), NOSPLIT, $0-72
	MOVQ plane_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ runs_base+48(FP), R8
	MOVQ runs_len+56(FP), R9
	XORPS X2, X2       // +0
	TESTQ R9, R9
	JE   done

run:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (SI)(AX*4), R10
	LEAQ (DI)(BX*4), R11

quad:
	CMPQ   CX, $4
	JL     single
	MOVUPS (R10), X0
	MOVUPS (R11), X1
	ADDPS  X0, X1       // plane + src, as the Go loop's d[i] += v
	MOVUPS X1, (R11)
	MOVUPS X2, (R10)
	ADDQ   $16, R10
	ADDQ   $16, R11
	SUBQ   $4, CX
	JMP    quad

single:
	TESTQ CX, CX
	JE    next
	MOVSS (R10), X0
	MOVSS (R11), X1
	ADDSS X0, X1
	MOVSS X1, (R11)
	MOVSS X2, (R10)
	ADDQ  $4, R10
	ADDQ  $4, R11
	DECQ  CX
	JMP   single

next:
	ADDQ $12, R8
	DECQ R9
	JNE  run

done:
	RET

// func copySum4Float32(dst, src []float32, part *[4]float64)
// len(src) must be a multiple of 4 and len(dst) ≥ len(src).
TEXT ·copySum4Float32(SB), NOSPLIT, $0-56
	MOVQ    dst_base+0(FP), DI
	MOVQ    src_base+24(FP), SI
	MOVQ    src_len+32(FP), CX
	MOVQ    part+48(FP), DX
	MOVUPD  0(DX), X6  // part[0], part[1]
	MOVUPD  16(DX), X7 // part[2], part[3]
	SHRQ    $2, CX
	TESTQ   CX, CX
	JE      sumdone

sumquad:
	MOVUPS   (SI), X0
	MOVUPS   X0, (DI)
	CVTPS2PD X0, X1     // v[i], v[i+1] as float64
	MOVHLPS  X0, X0
	CVTPS2PD X0, X2     // v[i+2], v[i+3]
	ADDPD    X1, X6
	ADDPD    X2, X7
	ADDQ     $16, SI
	ADDQ     $16, DI
	DECQ     CX
	JNE      sumquad

sumdone:
	MOVUPD X6, 0(DX)
	MOVUPD X7, 16(DX)
	RET
