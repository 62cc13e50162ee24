//go:build !purego

#include "textflag.h"

// The offsets of four windows' first columns in a pair of rows.
DATA poolLanes<>+0(SB)/4, $0
DATA poolLanes<>+4(SB)/4, $2
DATA poolLanes<>+8(SB)/4, $4
DATA poolLanes<>+12(SB)/4, $6
GLOBL poolLanes<>(SB), RODATA|NOPTR, $16

// RELU_BITS turns V's lanes into reluBits of them: a negative value or a
// NaN becomes +0's bits. Clobbers X5, X6; X15 holds +Inf's bits.
#define RELU_BITS(V) \
	MOVO  V, X5     \
	PSRAL $31, X5   \
	PANDN V, X5     \
	MOVO  X15, X6   \
	PSUBL X5, X6    \
	PSRAL $31, X6   \
	PANDN X5, X6    \
	MOVO  X6, V

// WINDOWS loads four windows from the rows at R13 (r0) and R14 (r1) as
// the reluBits of their inputs in window order: X0 = r0[j], X2 =
// r0[j+1], X3 = r1[j], X4 = r1[j+1], lane k for the window of column
// j = 2k. Clobbers X1, X5, X6.
#define WINDOWS \
	MOVUPS (R13), X0     \
	MOVUPS 16(R13), X1   \
	MOVAPS X0, X2        \
	SHUFPS $0x88, X1, X0 \
	SHUFPS $0xDD, X1, X2 \
	MOVUPS (R14), X3     \
	MOVUPS 16(R14), X1   \
	MOVAPS X3, X4        \
	SHUFPS $0x88, X1, X3 \
	SHUFPS $0xDD, X1, X4 \
	RELU_BITS(X0)        \
	RELU_BITS(X2)        \
	RELU_BITS(X3)        \
	RELU_BITS(X4)

// GREATER is greaterBits on four lanes: where V > X7 (the best bits so
// far), X7 takes V and X8 (the argmaxes) takes I. Clobbers X5, X6.
#define GREATER(V, I) \
	MOVO    V, X5     \
	PCMPGTL X7, X5    \
	MOVO    X7, X6    \
	PXOR    V, X6     \
	PAND    X5, X6    \
	PXOR    X6, X7    \
	MOVO    X8, X6    \
	PXOR    I, X6     \
	PAND    X5, X6    \
	PXOR    X6, X8

// MAX_BITS sets D to the lanes' larger of S and D, as signed integers
// (SSE2 has no PMAXSD). Clobbers X5.
#define MAX_BITS(S, D) \
	MOVO    S, X5     \
	PCMPGTL D, X5     \
	PAND    X5, S     \
	PANDN   D, X5     \
	POR     S, X5     \
	MOVO    X5, D

// func pool2x2QuadsFloat32(in, out []float32, arg []int32, w, oh, ow int)
TEXT ·pool2x2QuadsFloat32(SB), NOSPLIT, $0-96
	MOVQ in_base+0(FP), SI
	MOVQ out_base+24(FP), DI
	MOVQ arg_base+48(FP), DX
	MOVQ w+72(FP), R8
	MOVQ oh+80(FP), R9
	MOVQ ow+88(FP), R10
	MOVQ R10, R11
	SHRQ $2, R11         // quads per row
	ANDQ $3, R10
	SHLQ $2, R10         // the bytes of a row's outputs past its quads
	TESTQ R11, R11
	JE   done
	TESTQ R9, R9
	JE   done

	MOVL    $0x7f800000, AX
	MOVQ    AX, X15
	PSHUFD  $0, X15, X15 // +Inf's bits
	PCMPEQL X14, X14     // −1
	MOVL    $8, AX
	MOVQ    AX, X13
	PSHUFD  $0, X13, X13 // 8: the next quad's columns
	MOVQ    R8, X12
	PSHUFD  $0, X12, X12 // w: the second row
	MOVL    $1, AX
	MOVQ    AX, X11
	PSHUFD  $0, X11, X11 // 1: the second column
	XORQ    R12, R12     // oy
	XORQ    BX, BX       // top = 2·oy·w

row:
	LEAQ   (SI)(BX*4), R13 // r0
	LEAQ   (R13)(R8*4), R14 // r1
	MOVQ   BX, X10
	PSHUFD $0, X10, X10
	MOVOU  poolLanes<>(SB), X9
	PADDL  X9, X10         // the quad's windows' first input: top + 2·ox
	MOVQ   R11, AX

quad:
	WINDOWS
	PXOR   X7, X7        // best: +0
	MOVO   X14, X8       // at: −1
	GREATER(X0, X10)
	MOVO   X10, X9
	PADDL  X11, X9
	GREATER(X2, X9)
	MOVO   X10, X9
	PADDL  X12, X9
	GREATER(X3, X9)
	PADDL  X11, X9
	GREATER(X4, X9)
	MOVUPS X7, (DI)
	MOVOU  X8, (DX)
	ADDQ   $32, R13
	ADDQ   $32, R14
	ADDQ   $16, DI
	ADDQ   $16, DX
	PADDL  X13, X10
	DECQ   AX
	JNE    quad

	ADDQ R10, DI
	ADDQ R10, DX
	INCQ R12
	LEAQ (BX)(R8*2), BX
	CMPQ R12, R9
	JL   row

done:
	RET

// func pool2x2QuadsMaxFloat32(in, out []float32, w, oh, ow int)
TEXT ·pool2x2QuadsMaxFloat32(SB), NOSPLIT, $0-72
	MOVQ in_base+0(FP), SI
	MOVQ out_base+24(FP), DI
	MOVQ w+48(FP), R8
	MOVQ oh+56(FP), R9
	MOVQ ow+64(FP), R10
	MOVQ R10, R11
	SHRQ $2, R11         // quads per row
	ANDQ $3, R10
	SHLQ $2, R10         // the bytes of a row's outputs past its quads
	TESTQ R11, R11
	JE   mdone
	TESTQ R9, R9
	JE   mdone

	MOVL   $0x7f800000, AX
	MOVQ   AX, X15
	PSHUFD $0, X15, X15 // +Inf's bits
	XORQ   R12, R12     // oy
	XORQ   BX, BX       // top = 2·oy·w

mrow:
	LEAQ (SI)(BX*4), R13 // r0
	LEAQ (R13)(R8*4), R14 // r1
	MOVQ R11, AX

mquad:
	WINDOWS
	MAX_BITS(X2, X0)
	MAX_BITS(X3, X0)
	MAX_BITS(X4, X0)
	MOVUPS X0, (DI)
	ADDQ   $32, R13
	ADDQ   $32, R14
	ADDQ   $16, DI
	DECQ   AX
	JNE    mquad

	ADDQ R10, DI
	INCQ R12
	LEAQ (BX)(R8*2), BX
	CMPQ R12, R9
	JL   mrow

mdone:
	RET
