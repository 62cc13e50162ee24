package asm

import "golang.org/x/sys/cpu"

// CPU is what the processor and its operating system support, whether
// or not this build's assembly uses it. The processor's features are
// read here and nowhere else: internal/openblas picks OpenBLAS's kernel
// set by them too.
var CPU = struct {
	AVX2, FMA                                       bool
	AVX512F, AVX512CD, AVX512BW, AVX512DQ, AVX512VL bool
}{
	AVX2: cpu.X86.HasAVX2, FMA: cpu.X86.HasFMA,
	AVX512F: cpu.X86.HasAVX512F, AVX512CD: cpu.X86.HasAVX512CD, AVX512BW: cpu.X86.HasAVX512BW,
	AVX512DQ: cpu.X86.HasAVX512DQ, AVX512VL: cpu.X86.HasAVX512VL,
}

// avx2 and avx512 say whether this build's assembly may take its AVX2
// and AVX-512 paths: the processor has the instructions (AVX-512's
// foundation, all the routines use) and the build has the assembly
// (built, stubs_amd64.go). The switches start from them.
var (
	avx2   = built && CPU.AVX2
	avx512 = built && CPU.AVX512F
)
