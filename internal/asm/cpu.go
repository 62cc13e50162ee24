package asm

import "golang.org/x/sys/cpu"

// cpuFeatures is what the processor and its operating system support,
// whether or not this build's assembly uses it. The processor's features
// are read here and nowhere else; other packages ask X86Level.
var cpuFeatures = struct {
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
	avx2   = built && cpuFeatures.AVX2
	avx512 = built && cpuFeatures.AVX512F
)

// X86Level is the x86-64 microarchitecture level the processor and its
// operating system support, as far as vector kernels care: 4 with
// AVX-512 F, CD, BW, DQ and VL (x86-64-v4), 3 with AVX2 and FMA
// (x86-64-v3), else 2 (or not an x86 processor). internal/openblas picks
// OpenBLAS's kernel set by it.
func X86Level() int {
	x := cpuFeatures
	switch {
	case !(x.AVX2 && x.FMA):
		return 2
	case x.AVX512F && x.AVX512CD && x.AVX512BW && x.AVX512DQ && x.AVX512VL:
		return 4
	}
	return 3
}
