//go:build cgo

// Package kernels holds the CUDA kernels of the GPU backend (all.h,
// typed.h; kernels.cu is nvcc's entry) and an emulator that runs them on
// the CPU: a gpu.Device that compiles the same source with the host's C++
// compiler (cgo) and runs a launch's threads one after another, with
// device memory in the C heap and matrix products by gonum's BLAS. The
// emulator exists so that the kernels and the code that launches them are
// tested on machines without a GPU (package gpu/gputest); it is far too
// slow to train with.
//
// A new allocation reads as NaNs (all bits set), where a GPU's holds
// whatever it held: nothing may read device memory before writing it.
//
// A launch's threads run in order, so a kernel that relied on threads
// running at once (barriers, shared memory, atomics) would not be
// emulated faithfully; the kernels use none of these (compat.h).
//
// The kernel source is in .h files so that Go's build cache, which
// hashes a package's headers, recompiles the emulator when a kernel
// changes.
package kernels

/*
#cgo CXXFLAGS: -std=c++17 -O2
#include <stdlib.h>
#include <string.h>

int emu_arity(const char *name);
int emu_launch(const char *name, unsigned lanes, unsigned grid, unsigned block, char *buf, const int *offsets, int n);
int emu_count(void);
const char *emu_name(int i);
*/
import "C"

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// Emulator is the emulated device. Its methods may be called from several
// goroutines; launches run one at a time (the emulated thread indices are
// global).
type Emulator struct {
	mu    sync.Mutex
	sizes map[gpu.Ptr]int // live allocations
}

// NewEmulator returns an emulated device.
func NewEmulator() *Emulator { return &Emulator{sizes: map[gpu.Ptr]int{}} }

func (*Emulator) Name() string { return "emulated GPU (kernels run on the CPU)" }

func (d *Emulator) Alloc(bytes int) (gpu.Ptr, error) {
	if bytes <= 0 {
		return 0, fmt.Errorf("kernels: emulator: allocation of %d bytes", bytes)
	}
	p := C.malloc(C.size_t(bytes))
	if p == nil {
		return 0, fmt.Errorf("kernels: emulator: out of memory for %d bytes", bytes)
	}
	// cudaMalloc promises nothing of a new allocation's contents, and the
	// C heap's are often zero: every byte set makes each float a NaN and
	// each integer −1, so that code reading memory it never wrote fails
	// here on every machine rather than on some GPUs.
	C.memset(p, 0xff, C.size_t(bytes))
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sizes[gpu.Ptr(p)] = bytes
	return gpu.Ptr(p), nil
}

func (d *Emulator) Free(p gpu.Ptr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.sizes[p]; !ok {
		return fmt.Errorf("kernels: emulator: free of %#x, which is not an allocation", uintptr(p))
	}
	delete(d.sizes, p)
	C.free(addr(p))
	return nil
}

// Live is the number of allocations not yet freed, for leak checks.
func (d *Emulator) Live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.sizes)
}

func (d *Emulator) Upload(dst gpu.Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	C.memcpy(addr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)))
	return nil
}

func (d *Emulator) Download(dst []byte, src gpu.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	C.memcpy(unsafe.Pointer(&dst[0]), addr(src), C.size_t(len(dst)))
	return nil
}

func (d *Emulator) Launch(kernel string, threads int, args ...any) error {
	return d.LaunchLanes(kernel, threads, 1, gpu.Lanes{}, args...)
}

func (d *Emulator) LaunchLanes(kernel string, threads, lanes int, strides gpu.Lanes, args ...any) error {
	name := C.CString(kernel)
	defer C.free(unsafe.Pointer(name))
	if n := int(C.emu_arity(name)); n < 0 {
		return fmt.Errorf("kernels: emulator: no kernel %q", kernel)
	} else if n != len(args)+1 {
		return fmt.Errorf("kernels: emulator: kernel %s takes %d arguments and the lanes, given %d", kernel, n-1, len(args))
	}
	if lanes < 1 || lanes > gpu.MaxLanes {
		return fmt.Errorf("kernels: emulator: kernel %s on %d lanes", kernel, lanes)
	}
	buf, offsets, err := gpu.Pack(append(args[:len(args):len(args)], strides))
	if err != nil {
		return fmt.Errorf("%s: %w", kernel, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	C.emu_launch(name, C.uint(lanes), C.uint(gpu.Grid(threads)), C.uint(gpu.BlockSize),
		(*C.char)(unsafe.Pointer(&buf[0])), (*C.int)(unsafe.Pointer(&offsets[0])), C.int(len(offsets)))
	return nil
}

func (d *Emulator) Gemm(dt gpu.Dtype, tA, tB bool, m, n, k int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int, beta float64, c gpu.Ptr, ldc int) error {
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	if lda < ac || ldb < bc || ldc < n {
		return fmt.Errorf("kernels: emulator: gemm leading dimensions %d, %d, %d for %d×%d·%d×%d", lda, ldb, ldc, ar, ac, br, bc)
	}
	trans := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	switch dt {
	case gpu.Float32:
		blas32.Implementation().Sgemm(trans(tA), trans(tB), m, n, k, float32(alpha),
			slice[float32](a, (ar-1)*lda+ac), lda, slice[float32](b, (br-1)*ldb+bc), ldb,
			float32(beta), slice[float32](c, (m-1)*ldc+n), ldc)
	default:
		blas64.Implementation().Dgemm(trans(tA), trans(tB), m, n, k, alpha,
			slice[float64](a, (ar-1)*lda+ac), lda, slice[float64](b, (br-1)*ldb+bc), ldb,
			beta, slice[float64](c, (m-1)*ldc+n), ldc)
	}
	return nil
}

// GemmStrided is Gemm on each of batch triples, one after another.
func (d *Emulator) GemmStrided(dt gpu.Dtype, tA, tB bool, m, n, k int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int, beta float64, c gpu.Ptr, ldc int, strides [3]int, batch int) error {
	size := gpu.Ptr(dt.Size())
	for l := range batch {
		at := func(p gpu.Ptr, s int) gpu.Ptr { return p + gpu.Ptr(l*s)*size }
		if err := d.Gemm(dt, tA, tB, m, n, k, alpha, at(a, strides[0]), lda, at(b, strides[1]), ldb, beta, at(c, strides[2]), ldc); err != nil {
			return fmt.Errorf("matrix %d of %d: %w", l, batch, err)
		}
	}
	return nil
}

// slice is device memory at p as n elements of T.
func slice[T float32 | float64](p gpu.Ptr, n int) []T {
	return unsafe.Slice((*T)(addr(p)), n)
}

func (*Emulator) Sync() error { return nil }

// Close frees what is still allocated.
func (d *Emulator) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for p := range d.sizes {
		C.free(addr(p))
	}
	clear(d.sizes)
	return nil
}

// Kernels lists the names of the compiled kernels, sorted.
func Kernels() []string {
	var names []string
	for i := range int(C.emu_count()) {
		names = append(names, C.GoString(C.emu_name(C.int(i))))
	}
	sort.Strings(names)
	return names
}

var _ gpu.Device = (*Emulator)(nil)

// addr is device address p as a C pointer. The emulator's device memory
// is the C heap, which the Go collector does not move or free, so the
// address is a valid pointer; the conversion goes through memory because
// vet rightly rejects uintptr-to-pointer conversions of Go memory.
func addr(p gpu.Ptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
