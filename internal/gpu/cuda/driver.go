//go:build gpu

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

// The few types of the driver API that these calls use (cuda.h), so that
// building needs no CUDA headers.
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDeviceGetCount)(int *);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRelease)(CUdevice);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*p_cuModuleUnload)(CUmodule);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				    unsigned, CUstream, void **, void **);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree)(CUdeviceptr);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);
static CUresult (*p_cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*p_cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*p_cuGetErrorString)(CUresult, const char **);

// load_driver opens libcuda.so.1 and finds the functions above; it
// returns NULL, or what went wrong.
static const char *load_driver(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!lib)
		return dlerror();
#define SYM(var, name)                          \
	if (!(*(void **)&var = dlsym(lib, name))) \
		return "libcuda.so.1 lacks " name;
	SYM(p_cuInit, "cuInit")
	SYM(p_cuDeviceGetCount, "cuDeviceGetCount")
	SYM(p_cuDeviceGet, "cuDeviceGet")
	SYM(p_cuDeviceGetName, "cuDeviceGetName")
	SYM(p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
	SYM(p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
	SYM(p_cuCtxSetCurrent, "cuCtxSetCurrent")
	SYM(p_cuCtxSynchronize, "cuCtxSynchronize")
	SYM(p_cuModuleLoadData, "cuModuleLoadData")
	SYM(p_cuModuleUnload, "cuModuleUnload")
	SYM(p_cuModuleGetFunction, "cuModuleGetFunction")
	SYM(p_cuLaunchKernel, "cuLaunchKernel")
	SYM(p_cuMemAlloc, "cuMemAlloc_v2")
	SYM(p_cuMemFree, "cuMemFree_v2")
	SYM(p_cuMemGetInfo, "cuMemGetInfo_v2")
	SYM(p_cuMemcpyHtoD, "cuMemcpyHtoD_v2")
	SYM(p_cuMemcpyDtoH, "cuMemcpyDtoH_v2")
	SYM(p_cuGetErrorString, "cuGetErrorString")
#undef SYM
	return NULL;
}

// Every call makes the device's context current first: a goroutine may
// move between OS threads, and a CUDA context is current per thread.
CUresult mt_init(void) { return p_cuInit(0); }
CUresult mt_count(int *n) { return p_cuDeviceGetCount(n); }
CUresult mt_open(int ordinal, CUdevice *dev, CUcontext *ctx, char *name, int len)
{
	CUresult r = p_cuDeviceGet(dev, ordinal);
	if (!r)
		r = p_cuDeviceGetName(name, len, *dev);
	if (!r)
		r = p_cuDevicePrimaryCtxRetain(ctx, *dev);
	if (!r)
		r = p_cuCtxSetCurrent(*ctx);
	return r;
}
CUresult mt_release(CUdevice dev) { return p_cuDevicePrimaryCtxRelease(dev); }
CUresult mt_load(CUcontext ctx, CUmodule *m, const char *image)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuModuleLoadData(m, image);
}
CUresult mt_unload(CUcontext ctx, CUmodule m)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuModuleUnload(m);
}
CUresult mt_function(CUcontext ctx, CUmodule m, const char *name, CUfunction *f)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuModuleGetFunction(f, m, name);
}
// mt_launch launches f on a grid of grid × lanes blocks with the n
// arguments in buf at offsets (gpu.Pack's layout, n ≤ gpu.MaxArgs).
CUresult mt_launch(CUcontext ctx, CUfunction f, unsigned lanes, unsigned grid, unsigned block, char *buf,
		   const int *offsets, int n)
{
	void *args[32];
	for (int i = 0; i < n && i < 32; i++)
		args[i] = buf + offsets[i];
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuLaunchKernel(f, grid, lanes, 1, block, 1, 1, 0, NULL, args, NULL);
}
CUresult mt_alloc(CUcontext ctx, CUdeviceptr *p, size_t n)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuMemAlloc(p, n);
}
CUresult mt_meminfo(CUcontext ctx, size_t *free, size_t *total)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuMemGetInfo(free, total);
}
CUresult mt_free(CUcontext ctx, CUdeviceptr p)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuMemFree(p);
}
CUresult mt_upload(CUcontext ctx, CUdeviceptr dst, const void *src, size_t n)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuMemcpyHtoD(dst, src, n);
}
CUresult mt_download(CUcontext ctx, void *dst, CUdeviceptr src, size_t n)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuMemcpyDtoH(dst, src, n);
}
CUresult mt_sync(CUcontext ctx)
{
	CUresult r = p_cuCtxSetCurrent(ctx);
	return r ? r : p_cuCtxSynchronize();
}
const char *mt_error(CUresult r)
{
	const char *s = NULL;
	if (p_cuGetErrorString && !p_cuGetErrorString(r, &s) && s)
		return s;
	return "unknown CUDA error";
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// loadDriver loads the driver API once per process.
var loadDriver = sync.OnceValue(func() error {
	if msg := C.load_driver(); msg != nil {
		return fmt.Errorf("no CUDA driver: %s (install the NVIDIA driver; a GPU host has libcuda.so.1)", C.GoString(msg))
	}
	if r := C.mt_init(); r != 0 {
		return fmt.Errorf("no usable GPU: cuInit: %w", cudaError(r))
	}
	return nil
})

// resultError is a CUDA driver error.
type resultError struct {
	code C.CUresult
}

func (e resultError) Error() string {
	return fmt.Sprintf("%s (CUDA error %d)", C.GoString(C.mt_error(e.code)), int(e.code))
}

func cudaError(r C.CUresult) error {
	if r == 0 {
		return nil
	}
	return resultError{r}
}

// devptr is p as the driver's device pointer.
func devptr(p uintptr) C.CUdeviceptr { return C.CUdeviceptr(p) }

// cbytes is the address of b's first byte, for copies.
func cbytes(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
