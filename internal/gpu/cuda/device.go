//go:build gpu

package cuda

/*
#include <stdlib.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef unsigned long long CUdeviceptr;

CUresult mt_count(int *n);
CUresult mt_open(int ordinal, CUdevice *dev, CUcontext *ctx, char *name, int len);
CUresult mt_release(CUdevice dev);
CUresult mt_load(CUcontext ctx, CUmodule *m, const char *image);
CUresult mt_unload(CUcontext ctx, CUmodule m);
CUresult mt_function(CUcontext ctx, CUmodule m, const char *name, CUfunction *f);
CUresult mt_launch(CUcontext ctx, CUfunction f, unsigned lanes, unsigned grid, unsigned block, char *buf, const int *offsets, int n);
CUresult mt_alloc(CUcontext ctx, CUdeviceptr *p, size_t n);
CUresult mt_free(CUcontext ctx, CUdeviceptr p);
CUresult mt_meminfo(CUcontext ctx, size_t *free, size_t *total);
CUresult mt_upload(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n);
CUresult mt_download(CUcontext ctx, void *dst, CUdeviceptr src, size_t n);
CUresult mt_sync(CUcontext ctx);
*/
import "C"

import (
	_ "embed"
	"fmt"
	"sync"
	"unsafe"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// ptx is the kernels of package gpu/kernels compiled by nvcc for compute capability 7.0;
// the driver compiles it for the GPU it runs on when the module loads.
//
//go:embed kernels.ptx
var ptx string

// Device is one GPU with the kernels loaded and a cuBLAS handle.
type Device struct {
	name string
	dev  C.CUdevice
	ctx  C.CUcontext
	mod  C.CUmodule
	blas *blas

	mu  sync.Mutex
	fns map[string]C.CUfunction
}

const built = true

// Open returns GPU number ordinal (0 for the first), or an error saying
// why there is none: no driver, no GPU, no cuBLAS.
func Open(ordinal int) (gpu.Device, error) {
	if err := loadDriver(); err != nil {
		return nil, err
	}
	var n C.int
	if err := cudaError(C.mt_count(&n)); err != nil {
		return nil, fmt.Errorf("counting GPUs: %w", err)
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("no GPU number %d: this host has %d", ordinal, int(n))
	}
	d := &Device{fns: map[string]C.CUfunction{}}
	var name [256]C.char
	if err := cudaError(C.mt_open(C.int(ordinal), &d.dev, &d.ctx, &name[0], C.int(len(name)))); err != nil {
		return nil, fmt.Errorf("opening GPU %d: %w", ordinal, err)
	}
	d.name = fmt.Sprintf("GPU %d (%s)", ordinal, C.GoString(&name[0]))
	image := C.CString(ptx)
	defer C.free(unsafe.Pointer(image))
	if err := cudaError(C.mt_load(d.ctx, &d.mod, image)); err != nil {
		C.mt_release(d.dev)
		return nil, fmt.Errorf("%s: loading the kernels: %w", d.name, err)
	}
	b, err := newBlas(unsafe.Pointer(d.ctx))
	if err != nil {
		C.mt_unload(d.ctx, d.mod)
		C.mt_release(d.dev)
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	d.blas = b
	return d, nil
}

func (d *Device) Name() string { return d.name }

func (d *Device) Alloc(bytes int) (gpu.Ptr, error) {
	if bytes <= 0 {
		return 0, fmt.Errorf("%s: allocation of %d bytes", d.name, bytes)
	}
	var p C.CUdeviceptr
	if err := cudaError(C.mt_alloc(d.ctx, &p, C.size_t(bytes))); err != nil {
		return 0, fmt.Errorf("%s: allocating %d bytes: %w", d.name, bytes, err)
	}
	return gpu.Ptr(p), nil
}

// FreeMemory implements gpu.MemoryReporter: the driver's count of the
// device's free bytes (cuMemGetInfo).
func (d *Device) FreeMemory() (int, error) {
	var free, total C.size_t
	if err := cudaError(C.mt_meminfo(d.ctx, &free, &total)); err != nil {
		return 0, fmt.Errorf("%s: free memory: %w", d.name, err)
	}
	return int(free), nil
}

func (d *Device) Free(p gpu.Ptr) error {
	if err := cudaError(C.mt_free(d.ctx, C.CUdeviceptr(p))); err != nil {
		return fmt.Errorf("%s: free: %w", d.name, err)
	}
	return nil
}

func (d *Device) Upload(dst gpu.Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := cudaError(C.mt_upload(d.ctx, C.CUdeviceptr(dst), cbytes(src), C.size_t(len(src)))); err != nil {
		return fmt.Errorf("%s: copy to the device: %w", d.name, err)
	}
	return nil
}

func (d *Device) Download(dst []byte, src gpu.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	if err := cudaError(C.mt_download(d.ctx, cbytes(dst), C.CUdeviceptr(src), C.size_t(len(dst)))); err != nil {
		return fmt.Errorf("%s: copy from the device: %w", d.name, err)
	}
	return nil
}

// function returns the named kernel, looked up once.
func (d *Device) function(kernel string) (C.CUfunction, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.fns[kernel]; ok {
		return f, nil
	}
	name := C.CString(kernel)
	defer C.free(unsafe.Pointer(name))
	var f C.CUfunction
	if err := cudaError(C.mt_function(d.ctx, d.mod, name, &f)); err != nil {
		return nil, fmt.Errorf("%s: kernel %q: %w", d.name, kernel, err)
	}
	d.fns[kernel] = f
	return f, nil
}

func (d *Device) Launch(kernel string, threads int, args ...any) error {
	return d.LaunchLanes(kernel, threads, 1, gpu.Lanes{}, args...)
}

func (d *Device) LaunchLanes(kernel string, threads, lanes int, strides gpu.Lanes, args ...any) error {
	if lanes < 1 || lanes > gpu.MaxLanes {
		return fmt.Errorf("%s: launching %s on %d lanes", d.name, kernel, lanes)
	}
	f, err := d.function(kernel)
	if err != nil {
		return err
	}
	buf, offsets, err := gpu.Pack(append(args[:len(args):len(args)], strides))
	if err != nil {
		return fmt.Errorf("%s: %w", kernel, err)
	}
	// The launch copies the arguments, so buf need only outlive the call.
	if err := cudaError(C.mt_launch(d.ctx, f, C.uint(lanes), C.uint(gpu.Grid(threads)), C.uint(gpu.BlockSize),
		(*C.char)(unsafe.Pointer(&buf[0])), (*C.int)(unsafe.Pointer(&offsets[0])), C.int(len(offsets)))); err != nil {
		return fmt.Errorf("%s: launching %s: %w", d.name, kernel, err)
	}
	return nil
}

func (d *Device) Gemm(dt gpu.Dtype, tA, tB bool, m, n, k int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int, beta float64, c gpu.Ptr, ldc int) error {
	if err := d.blas.gemm(dt == gpu.Float64, tA, tB, m, n, k, alpha, uintptr(a), lda, uintptr(b), ldb, beta, uintptr(c), ldc); err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	return nil
}

func (d *Device) GemmStrided(dt gpu.Dtype, tA, tB bool, m, n, k int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int, beta float64, c gpu.Ptr, ldc int, strides [3]int, batch int) error {
	if err := d.blas.gemmStrided(dt == gpu.Float64, tA, tB, m, n, k, alpha, uintptr(a), lda, uintptr(b), ldb, beta, uintptr(c), ldc, strides, batch); err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	return nil
}

func (d *Device) Sync() error {
	if err := cudaError(C.mt_sync(d.ctx)); err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	return nil
}

func (d *Device) Close() error {
	err := d.blas.close()
	if e := cudaError(C.mt_unload(d.ctx, d.mod)); e != nil && err == nil {
		err = e
	}
	if e := cudaError(C.mt_release(d.dev)); e != nil && err == nil {
		err = e
	}
	return err
}
