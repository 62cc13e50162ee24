// compat.h lets the kernels be compiled either by nvcc, for the GPU, or
// by a C++ compiler with MTSGD_EMULATE defined, for the emulator that runs
// them on the CPU (emu.cc). Kernels written for both use only
// what is defined here: one-dimensional grids, grid-stride loops, no
// shared memory, no barriers and no atomics, so that running a launch's
// threads one after another computes what the GPU computes.
#ifndef MTSGD_COMPAT_H
#define MTSGD_COMPAT_H

#ifdef MTSGD_EMULATE
#include <cmath>

struct dim3 {
	unsigned x, y, z;
};
// The emulator sets these before it calls a kernel for one thread.
extern dim3 blockIdx, threadIdx, blockDim, gridDim;

#define __global__
#define __device__ static inline
using std::exp;
using std::log;
using std::sqrt;
#endif

// FOR runs i over [0, n) in a grid-stride loop: every index is visited by
// exactly one thread whatever the launch's size.
#define FOR(i, n)                                                          \
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
	     i < (long long)(n); i += (long long)blockDim.x * gridDim.x)

// geom is a convolution's or a pooling's sizes, passed by value: input
// (n, c, h, w), filters (o, c, k, k), stride, padding and output (oh, ow).
struct geom {
	int n, c, h, w, o, k, stride, pad, oh, ow;
};

#endif
