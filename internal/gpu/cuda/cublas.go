//go:build gpu

package cuda

/*
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

typedef void *CUcontext;
typedef void *cublasHandle_t;
typedef int cublasStatus_t;

static cublasStatus_t (*p_cublasCreate)(cublasHandle_t *);
static cublasStatus_t (*p_cublasDestroy)(cublasHandle_t);
static cublasStatus_t (*p_cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
				       const float *, int, const float *, float *, int);
static cublasStatus_t (*p_cublasDgemm)(cublasHandle_t, int, int, int, int, int, const double *, const double *,
				       int, const double *, int, const double *, double *, int);
static cublasStatus_t (*p_cublasSgemmStridedBatched)(cublasHandle_t, int, int, int, int, int, const float *,
						     const float *, int, long long, const float *, int, long long,
						     const float *, float *, int, long long, int);
static cublasStatus_t (*p_cublasDgemmStridedBatched)(cublasHandle_t, int, int, int, int, int, const double *,
						     const double *, int, long long, const double *, int, long long,
						     const double *, double *, int, long long, int);
static int (*p_cuCtxSetCurrent)(CUcontext);

// load_cublas opens the library at path and finds the functions above;
// it returns NULL, or what went wrong.
static const char *load_cublas(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return dlerror();
#define SYM(var, name)                          \
	if (!(*(void **)&var = dlsym(lib, name))) \
		return "the library lacks " name;
	SYM(p_cublasCreate, "cublasCreate_v2")
	SYM(p_cublasDestroy, "cublasDestroy_v2")
	SYM(p_cublasSgemm, "cublasSgemm_v2")
	SYM(p_cublasDgemm, "cublasDgemm_v2")
	SYM(p_cublasSgemmStridedBatched, "cublasSgemmStridedBatched")
	SYM(p_cublasDgemmStridedBatched, "cublasDgemmStridedBatched")
#undef SYM
	// The driver is loaded already (RTLD_GLOBAL), as Open loads it first.
	*(void **)&p_cuCtxSetCurrent = dlsym(RTLD_DEFAULT, "cuCtxSetCurrent");
	return p_cuCtxSetCurrent ? NULL : "cuCtxSetCurrent not found";
}

static cublasStatus_t mt_blas_create(CUcontext ctx, cublasHandle_t *h)
{
	if (p_cuCtxSetCurrent(ctx))
		return -1;
	return p_cublasCreate(h);
}
static cublasStatus_t mt_blas_destroy(CUcontext ctx, cublasHandle_t h)
{
	if (p_cuCtxSetCurrent(ctx))
		return -1;
	return p_cublasDestroy(h);
}
// Column-major, as cuBLAS is; package cuda swaps the operands for
// row-major matrices.
static cublasStatus_t mt_sgemm(CUcontext ctx, cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
			       unsigned long long a, int lda, unsigned long long b, int ldb, float beta,
			       unsigned long long c, int ldc)
{
	if (p_cuCtxSetCurrent(ctx))
		return -1;
	return p_cublasSgemm(h, ta, tb, m, n, k, &alpha, (const float *)a, lda, (const float *)b, ldb, &beta,
			     (float *)c, ldc);
}
static cublasStatus_t mt_dgemm(CUcontext ctx, cublasHandle_t h, int ta, int tb, int m, int n, int k, double alpha,
			       unsigned long long a, int lda, unsigned long long b, int ldb, double beta,
			       unsigned long long c, int ldc)
{
	if (p_cuCtxSetCurrent(ctx))
		return -1;
	return p_cublasDgemm(h, ta, tb, m, n, k, &alpha, (const double *)a, lda, (const double *)b, ldb, &beta,
			     (double *)c, ldc);
}
// The strided-batched products, as mt_sgemm and mt_dgemm: matrix l is
// at a + l·sa, b + l·sb, c + l·sc elements.
static cublasStatus_t mt_sgemm_strided(CUcontext ctx, cublasHandle_t h, int ta, int tb, int m, int n, int k,
				       float alpha, unsigned long long a, int lda, long long sa, unsigned long long b,
				       int ldb, long long sb, float beta, unsigned long long c, int ldc, long long sc,
				       int batch)
{
	if (p_cuCtxSetCurrent(ctx))
		return -1;
	return p_cublasSgemmStridedBatched(h, ta, tb, m, n, k, &alpha, (const float *)a, lda, sa, (const float *)b, ldb,
					   sb, &beta, (float *)c, ldc, sc, batch);
}
static cublasStatus_t mt_dgemm_strided(CUcontext ctx, cublasHandle_t h, int ta, int tb, int m, int n, int k,
				       double alpha, unsigned long long a, int lda, long long sa, unsigned long long b,
				       int ldb, long long sb, double beta, unsigned long long c, int ldc, long long sc,
				       int batch)
{
	if (p_cuCtxSetCurrent(ctx))
		return -1;
	return p_cublasDgemmStridedBatched(h, ta, tb, m, n, k, &alpha, (const double *)a, lda, sa, (const double *)b,
					   ldb, sb, &beta, (double *)c, ldc, sc, batch);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// CublasEnv names the environment variable that, when set, is the path
// of the cuBLAS library to load instead of the first of cublasNames found.
const CublasEnv = "MTSGD_CUBLAS"

// cublasNames are the sonames tried in order: the host's CUDA 13, 12 or
// 11 libraries, so that one binary runs with whichever the host has.
var cublasNames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

var loadCublas = sync.OnceValue(func() error {
	names := cublasNames
	if p := os.Getenv(CublasEnv); p != "" {
		names = []string{p}
	}
	var failed []string
	for _, name := range names {
		cs := C.CString(name)
		msg := C.load_cublas(cs)
		C.free(unsafe.Pointer(cs))
		if msg == nil {
			return nil
		}
		failed = append(failed, C.GoString(msg))
	}
	return fmt.Errorf("no cuBLAS (tried %s; set %s to the library's path): %s",
		strings.Join(names, ", "), CublasEnv, strings.Join(failed, "; "))
})

// blas is a cuBLAS handle bound to a context.
type blas struct {
	ctx    C.CUcontext
	handle C.cublasHandle_t
}

func newBlas(ctx unsafe.Pointer) (*blas, error) {
	if err := loadCublas(); err != nil {
		return nil, err
	}
	b := &blas{ctx: C.CUcontext(ctx)}
	if s := C.mt_blas_create(b.ctx, &b.handle); s != 0 {
		return nil, fmt.Errorf("cublasCreate: status %d", int(s))
	}
	return b, nil
}

func (b *blas) close() error {
	if s := C.mt_blas_destroy(b.ctx, b.handle); s != 0 {
		return fmt.Errorf("cublasDestroy: status %d", int(s))
	}
	return nil
}

// gemm is the row-major C = alpha·op(A)·op(B) + beta·C as the
// column-major Cᵀ = alpha·op(B)ᵀ·op(A)ᵀ + beta·Cᵀ: a row-major matrix is
// its transpose in column-major order.
func (b *blas) gemm(double, tA, tB bool, m, n, k int, alpha float64, a uintptr, lda int, bm uintptr, ldb int, beta float64, c uintptr, ldc int) error {
	op := func(t bool) C.int {
		if t {
			return 1 // CUBLAS_OP_T
		}
		return 0 // CUBLAS_OP_N
	}
	pa, pb, pc := C.ulonglong(a), C.ulonglong(bm), C.ulonglong(c)
	var s C.cublasStatus_t
	if double {
		s = C.mt_dgemm(b.ctx, b.handle, op(tB), op(tA), C.int(n), C.int(m), C.int(k), C.double(alpha), pb, C.int(ldb), pa, C.int(lda), C.double(beta), pc, C.int(ldc))
	} else {
		s = C.mt_sgemm(b.ctx, b.handle, op(tB), op(tA), C.int(n), C.int(m), C.int(k), C.float(alpha), pb, C.int(ldb), pa, C.int(lda), C.float(beta), pc, C.int(ldc))
	}
	if s != 0 {
		return errors.New("cublas gemm: status " + fmt.Sprint(int(s)))
	}
	return nil
}

// gemmStrided is gemm on batch triples of matrices, the l-th at a, b and
// c advanced by l·strides[0], l·strides[1], l·strides[2] elements, in one
// strided-batched product (the operands swapped as in gemm).
func (b *blas) gemmStrided(double, tA, tB bool, m, n, k int, alpha float64, a uintptr, lda int, bm uintptr, ldb int, beta float64, c uintptr, ldc int, strides [3]int, batch int) error {
	op := func(t bool) C.int {
		if t {
			return 1 // CUBLAS_OP_T
		}
		return 0 // CUBLAS_OP_N
	}
	pa, pb, pc := C.ulonglong(a), C.ulonglong(bm), C.ulonglong(c)
	sa, sb, sc := C.longlong(strides[0]), C.longlong(strides[1]), C.longlong(strides[2])
	var s C.cublasStatus_t
	if double {
		s = C.mt_dgemm_strided(b.ctx, b.handle, op(tB), op(tA), C.int(n), C.int(m), C.int(k), C.double(alpha), pb, C.int(ldb), sb, pa, C.int(lda), sa, C.double(beta), pc, C.int(ldc), sc, C.int(batch))
	} else {
		s = C.mt_sgemm_strided(b.ctx, b.handle, op(tB), op(tA), C.int(n), C.int(m), C.int(k), C.float(alpha), pb, C.int(ldb), sb, pa, C.int(lda), sa, C.float(beta), pc, C.int(ldc), sc, C.int(batch))
	}
	if s != 0 {
		return fmt.Errorf("cublas strided-batched gemm of %d: status %d", batch, int(s))
	}
	return nil
}
