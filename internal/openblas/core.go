package openblas

import "github.com/mtsgd/mtsgd/internal/asm"

// wideCores are the OpenBLAS kernel sets written for AVX2 or wider, by
// the names openblas_get_corename gives them. A processor OpenBLAS does
// not recognise gets Prescott's SSE3 kernels instead, whatever it
// supports: Debian's OpenBLAS 0.3.21 does this on Intel's Emerald Rapids
// (family 6, model 207), where its products then run at a fifth of the
// AVX-512 kernels' rate (docs/performance.md).
var wideCores = map[string]bool{
	"Haswell": true, "Zen": true, "SkylakeX": true, "Cooperlake": true, "SapphireRapids": true,
}

// features are the instruction sets that decide the kernel set, as the
// processor and the operating system both support them.
type features struct {
	avx2FMA bool // AVX2 and FMA: Haswell's kernels
	avx512  bool // AVX-512 F, CD, BW, DQ and VL: SkylakeX's kernels
}

// thisCPU is the features of the processor the program runs on, from
// the x86-64 level internal/asm reads.
func thisCPU() features {
	level := asm.X86Level()
	return features{avx2FMA: level >= 3, avx512: level >= 4}
}

// betterCore returns the kernel set to use in place of chosen, the one
// OpenBLAS picked, or "" to keep it. A recognised processor keeps
// OpenBLAS's choice; one given kernels narrower than it supports gets
// the widest set its features allow.
func betterCore(chosen string, f features) string {
	switch {
	case wideCores[chosen] || !f.avx2FMA:
		return ""
	case f.avx512:
		return "SkylakeX"
	default:
		return "Haswell"
	}
}
