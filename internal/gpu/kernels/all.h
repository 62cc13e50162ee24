// all.h is every kernel of the GPU backend (package gpu/cuda), which
// loads them as PTX (kernels.ptx, compiled from kernels.cu by `go generate
// ./internal/gpu/cuda`), and of the emulator (emu.cc), which compiles them
// for the CPU. typed.h holds the kernels of one element type, included
// here for float (names ending _f32) and double (_f64).
#include "compat.h"

#define REAL float
#define K(name) name##_f32
#include "typed.h"
#undef REAL
#undef K

#define REAL double
#define K(name) name##_f64
#include "typed.h"
#undef REAL
#undef K

// sum_columns is out[j] = Σ_i part[i·cols + j] over rows i in order:
// the second stage of channel_partial and of the per-row losses.
extern "C" __global__ void sum_columns(double *out, const double *part, int rows, int cols, struct lanes ln)
{
	LANE(ln, out, part);
	FOR(j, cols)
	{
		double s = 0;
		for (int i = 0; i < rows; i++)
			s += part[(long long)i * cols + j];
		out[j] = s;
	}
}

// bn_inverse is inv = 1/sqrt(var + ε) per channel.
extern "C" __global__ void bn_inverse(double *inv, const double *var, double eps, int c, struct lanes ln)
{
	LANE(ln, inv, var);
	FOR(ch, c) { inv[ch] = 1 / sqrt(var[ch] + eps); }
}

// normalize_columns divides column j of the rows×cols matrix s by the L2
// norm of that column, floored at lo (F.normalize along the rows): the
// per-coordinate normalisation of one task's scores across the particles.
extern "C" __global__ void normalize_columns(double *s, int rows, int cols, double lo, struct lanes ln)
{
	LANE(ln, s);
	FOR(j, cols)
	{
		double sq = 0;
		for (int i = 0; i < rows; i++) {
			double v = s[(long long)i * cols + j];
			sq += v * v;
		}
		double inv = 1 / fmax(sqrt(sq), lo);
		for (int i = 0; i < rows; i++)
			s[(long long)i * cols + j] *= inv;
	}
}
