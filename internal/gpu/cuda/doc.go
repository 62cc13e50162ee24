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

import (
	"errors"
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// ErrNotBuilt is Open's error in a build without -tags gpu.
var ErrNotBuilt = errors.New("this binary was built without CUDA support: build it with -tags gpu (see the README's GPU section)")

// Devices are the names the commands' -device flag takes: the CPU, and
// the host's first GPU.
var Devices = []string{"cpu", "cuda"}

// CheckName reports a -device value that is not one of Devices, or
// "cuda" in a build without the GPU backend (wrapping ErrNotBuilt): the
// mistakes a command line can make, before anything is opened.
func CheckName(name string) error {
	switch name {
	case "cpu":
		return nil
	case "cuda":
		if !built {
			return fmt.Errorf("-device cuda: %w", ErrNotBuilt)
		}
		return nil
	}
	return fmt.Errorf("-device must be cpu or cuda, got %q", name)
}

// OpenNamed opens the device a -device flag names: nil (the CPU) for
// "cpu", the first GPU for "cuda".
func OpenNamed(name string) (gpu.Device, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if name == "cpu" {
		return nil, nil
	}
	dev, err := Open(0)
	if err != nil {
		return nil, fmt.Errorf("-device cuda: %w", err)
	}
	return dev, nil
}

//go:generate nvcc -ptx -arch=compute_70 -O3 -o kernels.ptx ../kernels/kernels.cu
