//go:build !purego

#include "textflag.h"

// func addRunsFloat32(plane, src []float32, runs []Run)
// Run is {Pos, At, N int32}: 12 bytes.
TEXT ·addRunsFloat32(SB), NOSPLIT, $0-72
	MOVQ plane_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ runs_base+48(FP), R8
	MOVQ runs_len+56(FP), R9
	TESTQ R9, R9
	JE   done
	CMPB ·UseAVX2(SB), $0
	JNE  avx

run:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (SI)(AX*4), R10
	LEAQ (DI)(BX*4), R11

quad:
	CMPQ   CX, $4
	JL     pair
	MOVUPS (R10), X0
	MOVUPS (R11), X1
	ADDPS  X0, X1 // plane + src, as the Go loop's d[i] += v
	MOVUPS X1, (R11)
	ADDQ   $16, R10
	ADDQ   $16, R11
	SUBQ   $4, CX
	JMP    quad

pair: // two values in the low half; MOVSD clears the upper ones
	CMPQ  CX, $2
	JL    single
	MOVSD (R10), X0
	MOVSD (R11), X1
	ADDPS X0, X1
	MOVSD X1, (R11)
	ADDQ  $8, R10
	ADDQ  $8, R11
	SUBQ  $2, CX

single:
	TESTQ CX, CX
	JE    next
	MOVSS (R10), X0
	MOVSS (R11), X1
	ADDSS X0, X1
	MOVSS X1, (R11)

next:
	ADDQ $12, R8
	DECQ R9
	JNE  run

done:
	RET

// Eight values a step, then at most one four, one pair and one single,
// all VEX-encoded: a legacy SSE instruction while the registers' upper
// halves are in use made the loop twenty times slower.
avx:

avxrun:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (SI)(AX*4), R10
	LEAQ (DI)(BX*4), R11

avxoct:
	CMPQ    CX, $8
	JL      avxquad
	VMOVUPS (R11), Y1
	VADDPS  (R10), Y1, Y1 // the plane's value the first operand, as with ADDPS
	VMOVUPS Y1, (R11)
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JMP     avxoct

avxquad:
	CMPQ    CX, $4
	JL      avxpair
	VMOVUPS (R11), X1
	VADDPS  (R10), X1, X1
	VMOVUPS X1, (R11)
	ADDQ    $16, R10
	ADDQ    $16, R11
	SUBQ    $4, CX

avxpair:
	CMPQ   CX, $2
	JL     avxsingle
	VMOVSD (R10), X0
	VMOVSD (R11), X1
	VADDPS X0, X1, X1
	VMOVSD X1, (R11)
	ADDQ   $8, R10
	ADDQ   $8, R11
	SUBQ   $2, CX

avxsingle:
	TESTQ  CX, CX
	JE     avxnext
	VMOVSS (R10), X0
	VMOVSS (R11), X1
	VADDSS X0, X1, X1
	VMOVSS X1, (R11)

avxnext:
	ADDQ $12, R8
	DECQ R9
	JNE  avxrun
	VZEROUPPER
	RET

// func copyRunsFloat32(dst, plane []float32, runs []Run)
TEXT ·copyRunsFloat32(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ plane_base+24(FP), SI
	MOVQ runs_base+48(FP), R8
	MOVQ runs_len+56(FP), R9
	TESTQ R9, R9
	JE   done
	CMPB ·RunsAVX512(SB), $0
	JNE  avx512
	CMPB ·UseAVX2(SB), $0
	JNE  avx

run:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (DI)(AX*4), R11
	LEAQ (SI)(BX*4), R10

quad:
	CMPQ   CX, $4
	JL     pair
	MOVUPS (R10), X0
	MOVUPS X0, (R11)
	ADDQ   $16, R10
	ADDQ   $16, R11
	SUBQ   $4, CX
	JMP    quad

pair:
	CMPQ CX, $2
	JL   single
	MOVQ (R10), AX
	MOVQ AX, (R11)
	ADDQ $8, R10
	ADDQ $8, R11
	SUBQ $2, CX

single:
	TESTQ CX, CX
	JE    next
	MOVL  (R10), AX
	MOVL  AX, (R11)

next:
	ADDQ $12, R8
	DECQ R9
	JNE  run

done:
	RET

// Eight values a step, then at most one four, one pair and one single,
// all VEX-encoded: a legacy SSE instruction while the registers' upper
// halves are in use made the loop twenty times slower.
avx:

avxrun:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (DI)(AX*4), R11
	LEAQ (SI)(BX*4), R10

avxoct:
	CMPQ    CX, $8
	JL      avxquad
	VMOVUPS (R10), Y0
	VMOVUPS Y0, (R11)
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JMP     avxoct

avxquad:
	CMPQ    CX, $4
	JL      avxpair
	VMOVUPS (R10), X0
	VMOVUPS X0, (R11)
	ADDQ    $16, R10
	ADDQ    $16, R11
	SUBQ    $4, CX

avxpair:
	CMPQ CX, $2
	JL   avxsingle
	MOVQ (R10), AX
	MOVQ AX, (R11)
	ADDQ $8, R10
	ADDQ $8, R11
	SUBQ $2, CX

avxsingle:
	TESTQ CX, CX
	JE    avxnext
	MOVL  (R10), AX
	MOVL  AX, (R11)

avxnext:
	ADDQ $12, R8
	DECQ R9
	JNE  avxrun
	VZEROUPPER
	RET

// Sixteen values a step, the last of a run's values masked (AVX-512).
// Only the copy has this width: in the adding loops a masked store cannot
// pass its values on to the next run's load of the same plane, which
// waits for it, and col2im over LeNet's second layer (runs of 10) took
// twice as long.
avx512:

zrun:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (DI)(AX*4), R11
	LEAQ (SI)(BX*4), R10

zfull:
	CMPQ CX, $16
	JL   ztail
	VMOVUPS (R10), Z0
	VMOVUPS Z0, (R11)
	ADDQ $64, R10
	ADDQ $64, R11
	SUBQ $16, CX
	JMP  zfull

ztail:
	TESTQ CX, CX
	JE    znext
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z (R10), K1, Z0
	VMOVUPS   Z0, K1, (R11)

znext:
	ADDQ $12, R8
	DECQ R9
	JNE  zrun
	VZEROUPPER
	RET

// func addRunsClearingFloat32(plane, src []float32, runs []Run)
TEXT ·addRunsClearingFloat32(SB), NOSPLIT, $0-72
	MOVQ plane_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ runs_base+48(FP), R8
	MOVQ runs_len+56(FP), R9
	TESTQ R9, R9
	JE   done
	CMPB ·UseAVX2(SB), $0
	JNE  avx
	XORPS X2, X2 // +0

run:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (SI)(AX*4), R10
	LEAQ (DI)(BX*4), R11

quad:
	CMPQ   CX, $4
	JL     pair
	MOVUPS (R10), X0
	MOVUPS (R11), X1
	ADDPS  X0, X1 // plane + src, as the Go loop's d[i] += v
	MOVUPS X1, (R11)
	MOVUPS X2, (R10)
	ADDQ   $16, R10
	ADDQ   $16, R11
	SUBQ   $4, CX
	JMP    quad

pair: // two values in the low half; MOVSD clears the upper ones
	CMPQ  CX, $2
	JL    single
	MOVSD (R10), X0
	MOVSD (R11), X1
	ADDPS X0, X1
	MOVSD X1, (R11)
	MOVSD X2, (R10)
	ADDQ  $8, R10
	ADDQ  $8, R11
	SUBQ  $2, CX

single:
	TESTQ CX, CX
	JE    next
	MOVSS (R10), X0
	MOVSS (R11), X1
	ADDSS X0, X1
	MOVSS X1, (R11)
	MOVSS X2, (R10)

next:
	ADDQ $12, R8
	DECQ R9
	JNE  run

done:
	RET

// Eight values a step, then at most one four, one pair and one single,
// all VEX-encoded: a legacy SSE instruction while the registers' upper
// halves are in use made the loop twenty times slower.
avx:
	VXORPS Y2, Y2, Y2

avxrun:
	MOVLQSX 0(R8), AX  // pos
	MOVLQSX 4(R8), BX  // at
	MOVLQSX 8(R8), CX  // n
	LEAQ (SI)(AX*4), R10
	LEAQ (DI)(BX*4), R11

avxoct:
	CMPQ    CX, $8
	JL      avxquad
	VMOVUPS (R11), Y1
	VADDPS  (R10), Y1, Y1 // the plane's value the first operand, as with ADDPS
	VMOVUPS Y1, (R11)
	VMOVUPS Y2, (R10)
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JMP     avxoct

avxquad:
	CMPQ    CX, $4
	JL      avxpair
	VMOVUPS (R11), X1
	VADDPS  (R10), X1, X1
	VMOVUPS X1, (R11)
	VMOVUPS X2, (R10)
	ADDQ    $16, R10
	ADDQ    $16, R11
	SUBQ    $4, CX

avxpair:
	CMPQ   CX, $2
	JL     avxsingle
	VMOVSD (R10), X0
	VMOVSD (R11), X1
	VADDPS X0, X1, X1
	VMOVSD X1, (R11)
	VMOVSD X2, (R10)
	ADDQ   $8, R10
	ADDQ   $8, R11
	SUBQ   $2, CX

avxsingle:
	TESTQ  CX, CX
	JE     avxnext
	VMOVSS (R10), X0
	VMOVSS (R11), X1
	VADDSS X0, X1, X1
	VMOVSS X1, (R11)
	VMOVSS X2, (R10)

avxnext:
	ADDQ $12, R8
	DECQ R9
	JNE  avxrun
	VZEROUPPER
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

// func bnSums4Float32(g, x []float32, m float64, sumG, sumGX *[4]float64)
// Both of batch normalisation's parameter sums in one pass: sumG[k] +=
// float64(g[i]) as addTo4 adds, and sumGX[k] += float64(g[i])·(float64(x[i])
// − m) as centeredDot4 adds, for i ≡ k mod 4, in order. With AVX
// each set of four partial sums is the lanes of one YMM register; without,
// two SSE2 registers. len(g) must be a multiple of 4, len(x) ≥ len(g).
TEXT ·bnSums4Float32(SB), NOSPLIT, $0-72
	MOVQ g_base+0(FP), SI
	MOVQ g_len+8(FP), CX
	MOVQ x_base+24(FP), DI
	MOVQ sumG+56(FP), DX
	MOVQ sumGX+64(FP), R8
	SHRQ $2, CX
	CMPB ·UseAVX2(SB), $0
	JNE  sumsavx

	MOVSD    m+48(FP), X5
	UNPCKLPD X5, X5     // m, m
	MOVUPD   0(DX), X8  // sumG[0], sumG[1]
	MOVUPD   16(DX), X9 // sumG[2], sumG[3]
	MOVUPD   0(R8), X6  // sumGX[0], sumGX[1]
	MOVUPD   16(R8), X7 // sumGX[2], sumGX[3]
	TESTQ    CX, CX
	JE       sumsssedone

sumsquad:
	MOVUPS   (SI), X0
	MOVUPS   (DI), X1
	CVTPS2PD X0, X2     // g[i], g[i+1] as float64
	CVTPS2PD X1, X3     // x[i], x[i+1]
	ADDPD    X2, X8
	SUBPD    X5, X3     // x − m
	MULPD    X2, X3     // g·(x − m)
	ADDPD    X3, X6
	MOVHLPS  X0, X0
	MOVHLPS  X1, X1
	CVTPS2PD X0, X2     // g[i+2], g[i+3]
	CVTPS2PD X1, X3
	ADDPD    X2, X9
	SUBPD    X5, X3
	MULPD    X2, X3
	ADDPD    X3, X7
	ADDQ     $16, SI
	ADDQ     $16, DI
	DECQ     CX
	JNE      sumsquad

sumsssedone:
	MOVUPD X8, 0(DX)
	MOVUPD X9, 16(DX)
	MOVUPD X6, 0(R8)
	MOVUPD X7, 16(R8)
	RET

sumsavx:
	VBROADCASTSD m+48(FP), Y5
	VMOVUPD      (DX), Y6
	VMOVUPD      (R8), Y7
	TESTQ        CX, CX
	JE           sumsavxdone

sumsavxquad:
	VCVTPS2PD (SI), Y0     // g[i..i+3] as float64
	VCVTPS2PD (DI), Y1     // x[i..i+3]
	VADDPD    Y0, Y6, Y6
	VSUBPD    Y5, Y1, Y1   // x − m
	VMULPD    Y0, Y1, Y1   // g·(x − m)
	VADDPD    Y1, Y7, Y7
	ADDQ      $16, SI
	ADDQ      $16, DI
	DECQ      CX
	JNE       sumsavxquad

sumsavxdone:
	VMOVUPD Y6, (DX)
	VMOVUPD Y7, (R8)
	VZEROUPPER
	RET

// func affine2Float32(dst, g, x []float32, k, c0, c1 float64)
// dst[i] = float32((k·g[i] + c0) + c1·x[i]), in float64: four lanes per
// YMM register with AVX, else two per SSE2 register; len(g) must be a
// multiple of 4, dst and x at least as long.
TEXT ·affine2Float32(SB), NOSPLIT, $0-96
	MOVQ     dst_base+0(FP), DI
	MOVQ     g_base+24(FP), SI
	MOVQ     g_len+32(FP), CX
	MOVQ     x_base+48(FP), DX
	SHRQ     $2, CX
	CMPB     ·UseAVX2(SB), $0
	JNE      affavx
	MOVSD    k+72(FP), X5
	UNPCKLPD X5, X5     // k, k
	MOVSD    c0+80(FP), X6
	UNPCKLPD X6, X6     // c0, c0
	MOVSD    c1+88(FP), X7
	UNPCKLPD X7, X7     // c1, c1
	TESTQ    CX, CX
	JE       affdone

affquad:
	MOVUPS   (SI), X0
	MOVUPS   (DX), X1
	CVTPS2PD X0, X2     // g[i], g[i+1] as float64
	CVTPS2PD X1, X3     // x[i], x[i+1]
	MULPD    X5, X2     // k·g
	ADDPD    X6, X2     // + c0
	MULPD    X7, X3     // c1·x
	ADDPD    X3, X2
	CVTPD2PS X2, X2     // rounded to float32, in the low half
	MOVHLPS  X0, X0
	MOVHLPS  X1, X1
	CVTPS2PD X0, X0     // g[i+2], g[i+3]
	CVTPS2PD X1, X1
	MULPD    X5, X0
	ADDPD    X6, X0
	MULPD    X7, X1
	ADDPD    X1, X0
	CVTPD2PS X0, X0
	MOVLHPS  X0, X2     // the four results
	MOVUPS   X2, (DI)
	ADDQ     $16, SI
	ADDQ     $16, DX
	ADDQ     $16, DI
	DECQ     CX
	JNE      affquad

affdone:
	RET

affavx:
	VBROADCASTSD k+72(FP), Y5
	VBROADCASTSD c0+80(FP), Y6
	VBROADCASTSD c1+88(FP), Y7
	TESTQ        CX, CX
	JE           affavxdone

affavxquad:
	VCVTPS2PD (SI), Y0     // g[i..i+3] as float64
	VCVTPS2PD (DX), Y1     // x[i..i+3]
	VMULPD    Y5, Y0, Y0   // k·g
	VADDPD    Y6, Y0, Y0   // + c0
	VMULPD    Y7, Y1, Y1   // c1·x
	VADDPD    Y1, Y0, Y0
	VCVTPD2PSY Y0, X0      // rounded to float32
	VMOVUPS   X0, (DI)
	ADDQ      $16, SI
	ADDQ      $16, DX
	ADDQ      $16, DI
	DECQ      CX
	JNE       affavxquad

affavxdone:
	VZEROUPPER
	RET

// func addConstFloat32(dst, src []float32, b float32)
TEXT ·addConstFloat32(SB), NOSPLIT, $0-52
	MOVQ   dst_base+0(FP), DI
	MOVQ   src_base+24(FP), SI
	MOVQ   src_len+32(FP), CX
	MOVSS  b+48(FP), X0
	SHUFPS $0, X0, X0      // b in every lane
	MOVQ   CX, DX
	SHRQ   $4, DX          // blocks of 16
	JEQ    acrest

acblock:
	MOVUPS (SI), X1
	MOVUPS 16(SI), X2
	MOVUPS 32(SI), X3
	MOVUPS 48(SI), X4
	ADDPS  X0, X1
	ADDPS  X0, X2
	ADDPS  X0, X3
	ADDPS  X0, X4
	MOVUPS X1, (DI)
	MOVUPS X2, 16(DI)
	MOVUPS X3, 32(DI)
	MOVUPS X4, 48(DI)
	ADDQ   $64, SI
	ADDQ   $64, DI
	DECQ   DX
	JNE    acblock

acrest:
	ANDQ $15, CX
	JEQ  acdone

acone:
	MOVSS (SI), X1
	ADDSS X0, X1
	MOVSS X1, (DI)
	ADDQ  $4, SI
	ADDQ  $4, DI
	DECQ  CX
	JNE   acone

acdone:
	RET

// func sum4PlanesFloat32(planes []float32, stride, n int, parts *[4][4]float64)
// Four planes of n values (n a multiple of 4), stride values apart from
// planes[0], each added into its parts[j] as copySum4Float32 adds:
// parts[j][k] += float64(plane j's v[i]) for i ≡ k mod 4, in order. A
// plane's four partial sums are the lanes of one YMM register, and the
// four planes' chains of additions run side by side.
TEXT ·sum4PlanesFloat32(SB), NOSPLIT, $0-48
	MOVQ    planes_base+0(FP), SI
	MOVQ    stride+24(FP), BX
	SHLQ    $2, BX
	MOVQ    n+32(FP), CX
	MOVQ    parts+40(FP), DX
	LEAQ    (SI)(BX*2), DI // plane 2
	VMOVUPD 0(DX), Y4
	VMOVUPD 32(DX), Y5
	VMOVUPD 64(DX), Y6
	VMOVUPD 96(DX), Y7
	SHRQ    $2, CX
	TESTQ   CX, CX
	JE      planesdone

planesquad:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD (SI)(BX*1), Y1
	VCVTPS2PD (DI), Y2
	VCVTPS2PD (DI)(BX*1), Y3
	VADDPD    Y0, Y4, Y4
	VADDPD    Y1, Y5, Y5
	VADDPD    Y2, Y6, Y6
	VADDPD    Y3, Y7, Y7
	ADDQ      $16, SI
	ADDQ      $16, DI
	DECQ      CX
	JNE       planesquad

planesdone:
	VMOVUPD Y4, 0(DX)
	VMOVUPD Y5, 32(DX)
	VMOVUPD Y6, 64(DX)
	VMOVUPD Y7, 96(DX)
	VZEROUPPER
	RET

// func gatherFloat32(dst, src []float32, idx []int32)
// dst[i] = src[idx[i]] for i < len(idx), sixteen at a time with
// AVX-512's gather, the last ones under a mask. Every idx[i] must index
// src, and dst must hold len(idx) values.
TEXT ·gatherFloat32(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ idx_base+48(FP), DX
	MOVQ idx_len+56(FP), CX

gatherfull:
	CMPQ       CX, $16
	JLT        gathertail
	VMOVDQU32  (DX), Z1
	KXNORW     K1, K1, K1
	VGATHERDPS (SI)(Z1*4), K1, Z0
	VMOVUPS    Z0, (DI)
	ADDQ       $64, DX
	ADDQ       $64, DI
	SUBQ       $16, CX
	JMP        gatherfull

gathertail:
	TESTQ      CX, CX
	JE         gatherdone
	MOVL       $1, AX
	SHLL       CX, AX
	DECL       AX
	KMOVW      AX, K2
	KMOVW      AX, K1
	VMOVDQU32.Z (DX), K2, Z1
	VGATHERDPS (SI)(Z1*4), K1, Z0
	VMOVUPS    Z0, K2, (DI)

gatherdone:
	VZEROUPPER
	RET

// func pooledEntriesFloat32(v, arg, grad []float32, argmax []int32)
// v[q] = grad[q] and arg[q] = argmax[q] (its bits) where argmax[q] ≥ 0,
// both +0 where it is −1, for q < len(argmax), sixteen at a time with
// AVX-512, the last ones under a mask.
TEXT ·pooledEntriesFloat32(SB), NOSPLIT, $0-96
	MOVQ v_base+0(FP), DI
	MOVQ arg_base+24(FP), R8
	MOVQ grad_base+48(FP), SI
	MOVQ argmax_base+72(FP), DX
	MOVQ argmax_len+80(FP), CX

entriesfull:
	CMPQ      CX, $16
	JLT       entriestail
	VMOVDQU32 (DX), Z0
	VPSRAD    $31, Z0, Z1 // all ones where argmax < 0
	VPANDND   (SI), Z1, Z2
	VPANDND   Z0, Z1, Z3
	VMOVUPS   Z2, (DI)
	VMOVDQU32 Z3, (R8)
	ADDQ      $64, DX
	ADDQ      $64, SI
	ADDQ      $64, DI
	ADDQ      $64, R8
	SUBQ      $16, CX
	JMP       entriesfull

entriestail:
	TESTQ       CX, CX
	JE          entriesdone
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVDQU32.Z (DX), K1, Z0
	VMOVUPS.Z   (SI), K1, Z4
	VPSRAD      $31, Z0, Z1
	VPANDND     Z4, Z1, Z2
	VPANDND     Z0, Z1, Z3
	VMOVUPS     Z2, K1, (DI)
	VMOVDQU32   Z3, K1, (R8)

entriesdone:
	VZEROUPPER
	RET
