// compat.h lets the kernels be compiled either by nvcc, for the GPU, or
// by a C++ compiler with MTSGD_EMULATE defined, for the emulator that runs
// them on the CPU (emu.cc). Kernels written for both use only
// what is defined here: grid-stride loops over the grid's first
// dimension, its second for lanes (LANE), no shared memory, no barriers
// and no atomics, so that running a launch's threads one after another
// computes what the GPU computes.
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

// lanes is every kernel's last parameter: a launch over gridDim.y lanes
// runs the kernel once per lane, lane blockIdx.y with its k-th pointer
// parameter advanced by blockIdx.y·s[k] bytes (package gpu's Lanes). A
// launch of one lane is the kernel as written. Lanes are the particles
// of an ensemble, each with buffers of its own (gpu.Ensemble): one launch
// does the same layer's work for all of them.
#define MAX_LANE_PTRS 12
struct lanes {
	long long s[MAX_LANE_PTRS];
};

__device__ void lane_shift(const struct lanes &, int) {}

template <typename T, typename... R> __device__ void lane_shift(const struct lanes &ln, int k, T *&p, R *&...rest)
{
	p = (T *)((const char *)p + (long long)blockIdx.y * ln.s[k]);
	lane_shift(ln, k + 1, rest...);
}

// LANE(ln, p0, p1, …) moves a kernel's pointer parameters, in order, to
// its lane's: the first thing every kernel does.
#define LANE(ln, ...) lane_shift(ln, 0, __VA_ARGS__)

#endif
