// Package gpu is what the CUDA backend and its CPU emulator have in
// common: the Device interface through which device memory is allocated
// and copied and the kernels of package gpu/kernels are launched, and the
// packing of a launch's arguments.
//
// Two devices implement it. Package gpu/cuda runs the kernels on an
// NVIDIA GPU through the CUDA driver API (built with -tags gpu). Package
// gpu/kernels, which holds the kernel source, also has an emulator that
// compiles it with the host's C++ compiler and runs a launch's threads
// one after another on the CPU, so that every kernel is tested against a
// plain Go reference on machines without a GPU (package gpu/gputest holds
// those tests, for either device).
//
// Kernels exist for float32 and float64 (names ending _f32 and _f64), with
// sums accumulated in float64 as the CPU ops in package models/ops do.
package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Ptr is an address in a device's memory.
type Ptr uintptr

// Device is where kernels run.
type Device interface {
	// Name says which device this is, for messages.
	Name() string
	// Alloc returns bytes of uninitialised device memory.
	Alloc(bytes int) (Ptr, error)
	// Free releases memory from Alloc.
	Free(p Ptr) error
	// Upload copies bytes from host memory src to dst; Download the
	// reverse. Both wait until the copy is done.
	Upload(dst Ptr, src []byte) error
	Download(dst []byte, src Ptr) error
	// Launch runs the kernel with the given arguments on enough threads
	// for its grid-stride loop over threads items (at least one).
	// Arguments are Ptr, int (passed as a C int), float64 (a C double)
	// or Geom, in the kernel's order; the device adds the kernel's last,
	// Lanes{} (one lane).
	Launch(kernel string, threads int, args ...any) error
	// LaunchLanes is Launch over lanes sets of arguments at once: set l
	// is args with its k-th Ptr argument advanced by l·strides[k] bytes
	// (the kernels' LANE). Lanes must not write memory another lane
	// reads or writes.
	LaunchLanes(kernel string, threads, lanes int, strides Lanes, args ...any) error
	// Gemm is C = alpha·op(A)·op(B) + beta·C for row-major matrices of
	// float32 or float64 (dt), op(A) m×k and op(B) k×n, transposed
	// where tA, tB say.
	Gemm(dt Dtype, tA, tB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int) error
	// GemmStrided is Gemm on batch triples of matrices at once, the l-th
	// at a, b and c advanced by l·strides[0], l·strides[1] and
	// l·strides[2] elements (cuBLAS's strided-batched GEMM).
	GemmStrided(dt Dtype, tA, tB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int, strides [3]int, batch int) error
	// Sync waits until all work launched so far is done, and reports
	// the first error of a kernel that failed.
	Sync() error
	// Close releases the device; it must not be used afterwards.
	Close() error
}

// MemoryReporter is a Device that can say how many bytes of its memory
// are free (the CUDA device; not the emulator, whose memory is the
// host's).
type MemoryReporter interface {
	FreeMemory() (int, error)
}

// Dtype is an element type of the kernels.
type Dtype int

const (
	Float32 Dtype = iota
	Float64
)

// Size is the bytes of one element.
func (d Dtype) Size() int {
	if d == Float32 {
		return 4
	}
	return 8
}

// Suffix is how a kernel's name ends for elements of type d.
func (d Dtype) Suffix() string {
	if d == Float32 {
		return "_f32"
	}
	return "_f64"
}

// Geom is the kernels' struct geom: a convolution's or a pooling's input
// (N, C, H, W), filters (O, C, K, K), stride, padding and output (OH, OW).
type Geom struct {
	N, C, H, W, O, K, Stride, Pad, OH, OW int
}

// Lanes is every kernel's last argument, which the devices add to a
// launch: the byte strides of a launch over several lanes
// (LaunchLanes), one per Ptr argument in order; zero for a launch of one
// lane. It is the kernels' struct lanes.
type Lanes [MaxLanePtrs]int64

// MaxLanePtrs bounds the pointer arguments of a kernel launched over
// lanes (the kernels' MAX_LANE_PTRS).
const MaxLanePtrs = 12

// MaxLanes bounds a launch's lanes: the grid's second dimension.
const MaxLanes = 65535

// BlockSize is the threads per block of every launch.
const BlockSize = 256

// MaxBlocks bounds a launch's grid; the kernels' grid-stride loops cover
// any number of items with it.
const MaxBlocks = 65535

// Grid is the number of blocks for a launch over n items.
func Grid(n int) int {
	return min(max(1, (n+BlockSize-1)/BlockSize), MaxBlocks)
}

// MaxArgs bounds a kernel's parameters; the devices build the array of
// pointers to them on the C stack.
const MaxArgs = 32

// Pack lays out a launch's arguments as the kernel takes them: it returns
// their bytes and where each starts, for a device to turn into the array
// of pointers that cuLaunchKernel takes (on its side of cgo, since Go
// memory passed to C must not hold Go pointers). Every argument is
// aligned to 8 bytes, which satisfies each parameter's own alignment.
func Pack(args []any) (buf []byte, offsets []int32, err error) {
	if len(args) == 0 || len(args) > MaxArgs {
		return nil, nil, fmt.Errorf("gpu: %d arguments, want 1 to %d", len(args), MaxArgs)
	}
	for i, a := range args {
		for len(buf)%8 != 0 {
			buf = append(buf, 0)
		}
		offsets = append(offsets, int32(len(buf)))
		switch v := a.(type) {
		case Ptr:
			buf = binary.NativeEndian.AppendUint64(buf, uint64(v))
		case int:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, nil, fmt.Errorf("gpu: argument %d: %d does not fit a C int", i, v)
			}
			buf = binary.NativeEndian.AppendUint32(buf, uint32(int32(v)))
		case float64:
			buf = binary.NativeEndian.AppendUint64(buf, math.Float64bits(v))
		case Geom:
			for _, f := range []int{v.N, v.C, v.H, v.W, v.O, v.K, v.Stride, v.Pad, v.OH, v.OW} {
				buf = binary.NativeEndian.AppendUint32(buf, uint32(int32(f)))
			}
		case Lanes:
			for _, s := range v {
				buf = binary.NativeEndian.AppendUint64(buf, uint64(s))
			}
		default:
			return nil, nil, fmt.Errorf("gpu: argument %d is a %T; kernels take Ptr, int, float64, Geom and Lanes", i, a)
		}
	}
	return buf, offsets, nil
}

// Bytes views a slice of float32, float64 or int32 as its bytes, for
// Upload and Download.
func Bytes[T float32 | float64 | int32](s []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}
