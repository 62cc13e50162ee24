// Package cuda is the GPU backend: a gpu.Device on an NVIDIA GPU, built
// with -tags gpu. Without the tag, Open says the binary was built
// without it.
//
// It calls the CUDA driver API, loading libcuda.so.1 when Open is first
// called, and cuBLAS for matrix products, loading the first of
// libcublas.so.13, .12 and .11 that the host has (or the library that
// MTSGD_CUBLAS names). Nothing CUDA is linked at build time, so a cuda
// build compiles on any machine with a C compiler, starts on a host
// without a GPU (where Open returns an error saying what is missing),
// and runs against whatever driver and CUDA version a GPU host has.
//
// The kernels (package gpu/kernels) are compiled to PTX (kernels.ptx,
// committed and embedded): `go generate ./internal/gpu/cuda` remakes it
// with nvcc, which building does not need. PTX for compute capability
// 7.0 loads on every GPU since Volta; the driver compiles it for the
// device at load time.
package cuda

import "errors"

// ErrNotBuilt is Open's error in a build without -tags gpu.
var ErrNotBuilt = errors.New("this binary was built without CUDA support: build it with -tags gpu (see the README's GPU section)")

//go:generate nvcc -ptx -arch=compute_70 -O3 -o kernels.ptx ../kernels/kernels.cu
