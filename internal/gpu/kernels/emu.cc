// The emulator's side in C++: the kernels of all.h compiled for the
// CPU, and a launch that runs a grid's threads one after another.
#define MTSGD_EMULATE 1

#include <cstddef>
#include <map>
#include <string>
#include <utility>

#include "all.h"

dim3 blockIdx, threadIdx, blockDim, gridDim;

namespace {

// call invokes f with the arguments that args point to, as
// cuLaunchKernel's kernelParams do.
template <typename... A, std::size_t... I>
void call(void (*f)(A...), void **args, std::index_sequence<I...>)
{
	f(*static_cast<A *>(args[I])...);
}

struct kernel {
	void (*run)(const void *f, void **args);
	const void *f;
	std::size_t arity;
};

template <typename... A> kernel entry(void (*f)(A...))
{
	kernel k;
	k.f = reinterpret_cast<const void *>(f);
	k.arity = sizeof...(A);
	k.run = [](const void *g, void **args) {
		call(reinterpret_cast<void (*)(A...)>(g), args, std::index_sequence_for<A...>{});
	};
	return k;
}

#define TYPED(X)                                                                                  \
	X(fill)                                                                                   \
	X(axpy)                                                                                   \
	X(scale)                                                                                  \
	X(copy)                                                                                   \
	X(add)                                                                                    \
	X(swap01)                                                                                 \
	X(gather_rows)                                                                            \
	X(widen)                                                                                  \
	X(narrow)                                                                                 \
	X(relu)                                                                                   \
	X(add_relu)                                                                               \
	X(relu_grad)                                                                              \
	X(bias_add)                                                                               \
	X(column_sums)                                                                            \
	X(channel_partial)                                                                        \
	X(sum_columns_to)                                                                         \
	X(sum_columns2_to)                                                                        \
	X(sum_rows_to)                                                                            \
	X(bn_param_partials)                                                                      \
	X(bn_forward)                                                                             \
	X(bn_grad_input)                                                                          \
	X(im2col)                                                                                 \
	X(col2im)                                                                                 \
	X(relu_maxpool)                                                                           \
	X(maxpool_grad)                                                                           \
	X(avgpool)                                                                                \
	X(avgpool_grad)                                                                           \
	X(xent_rows)                                                                              \
	X(xent_grad)                                                                              \
	X(sqerr_rows)                                                                             \
	X(sqerr_grad)                                                                             \
	X(sgd)                                                                                    \
	X(adam)

#define UNTYPED(X)                                                                                \
	X(sum_columns)                                                                            \
	X(bn_inverse)                                                                             \
	X(normalize_columns)

const std::map<std::string, kernel> &table()
{
	static const std::map<std::string, kernel> t = [] {
		std::map<std::string, kernel> m;
#define BOTH(name)                                 \
	m[#name "_f32"] = entry(name##_f32); \
	m[#name "_f64"] = entry(name##_f64);
#define ONE(name) m[#name] = entry(name);
		TYPED(BOTH)
		UNTYPED(ONE)
		return m;
	}();
	return t;
}

} // namespace

extern "C" {

// emu_arity returns the number of parameters of the named kernel, or −1
// if there is none of that name.
int emu_arity(const char *name)
{
	auto it = table().find(name);
	return it == table().end() ? -1 : (int)it->second.arity;
}

// emu_launch runs the named kernel on lanes·grid·block threads, one
// after another (lane by lane: the grid's second dimension), with the n
// arguments in buf at offsets (gpu.Pack's layout); it returns −1 if
// there is no kernel of that name.
int emu_launch(const char *name, unsigned lanes, unsigned grid, unsigned block, char *buf, const int *offsets, int n)
{
	auto it = table().find(name);
	if (it == table().end())
		return -1;
	void *args[32];
	for (int i = 0; i < n && i < 32; i++)
		args[i] = buf + offsets[i];
	gridDim = {grid, lanes, 1};
	blockDim = {block, 1, 1};
	for (unsigned l = 0; l < lanes; l++)
		for (unsigned b = 0; b < grid; b++)
			for (unsigned t = 0; t < block; t++) {
				blockIdx = {b, l, 0};
				threadIdx = {t, 0, 0};
				it->second.run(it->second.f, args);
			}
	return 0;
}

// emu_count and emu_name list the kernels, for the test that every
// kernel of the source is registered.
int emu_count() { return (int)table().size(); }

const char *emu_name(int i)
{
	auto it = table().begin();
	std::advance(it, i);
	return it->first.c_str();
}
}
