package asm

// The switches turn the assembly's faster paths on and off. Each starts
// on where the processor has the instructions the path needs and the
// build has the assembly (cpu.go), and is off elsewhere, where the Go
// forms run. Tests turn them off and on to compare a path with the Go it
// stands for, bit for bit. A switch that starts off must stay off: the
// path it would take is not there, or the processor cannot run it.
var (
	// UseAVX2 makes the runs', sums' and batch normalisation's loops
	// (runs.go) take eight float32 values (four float64) a step rather
	// than four (two) with SSE2, which every amd64 has: the same
	// arithmetic in each lane, so the same bits. Sum4PlanesFloat32 needs
	// it.
	UseAVX2 = avx2

	// UseAVX512 lets callers take the AVX-512 routines of the thin
	// products (gemm.go), of the convolutions read from their input or
	// from a pool's gradient (conv.go), and col2im a plane at a time
	// (col2im.go); and makes the 2×2 pool and its gradient (pool.go),
	// ReLU's gradient (relu.go) and Winograd's transforms (winograd.go)
	// take sixteen values a step.
	UseAVX512 = avx512

	// RunsAVX512 makes CopyRunsFloat32 move sixteen values a step, a
	// run's last ones under a mask, and GatherFloat32 and
	// PooledEntriesFloat32 take sixteen a step.
	RunsAVX512 = avx512

	// AdamAVX512 makes Adam update eight coordinates a step (adam.go).
	AdamAVX512 = avx512

	// GramAVX512 lets callers take Gram and GramScores32 (gram.go), which
	// need it, rather than the BLAS.
	GramAVX512 = avx512

	// WidenAVX512 makes WidenScaled convert sixteen values a step
	// (widen.go).
	WidenAVX512 = avx512

	// NegateAVX512 makes Negate negate sixteen float32 values a step
	// (negate.go).
	NegateAVX512 = avx512
)
