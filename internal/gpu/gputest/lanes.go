package gputest

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// twoLanes is a device on which every launch runs over two lanes
// (LaunchLanes) and every matrix product is a strided-batched one of
// two (GemmStrided): each allocation is two parts, lane 0's and lane 1's,
// the caller sees lane 1's, and lane 0's holds other values (the same
// bytes rotated), so that a kernel reading or writing a pointer
// without moving it to its lane (LANE) reads lane 0's values or leaves
// lane 1's unwritten, and fails the check.
type twoLanes struct {
	gpu.Device
	allocs []lanePair
}

// lanePair is an allocation of two parts: lane 1's at p, lane 0's a
// stride before.
type lanePair struct {
	p             gpu.Ptr
	bytes, stride int
}

func (d *twoLanes) Alloc(bytes int) (gpu.Ptr, error) {
	stride := (bytes + 255) / 256 * 256
	p, err := d.Device.Alloc(2 * stride)
	if err != nil {
		return 0, err
	}
	d.allocs = append(d.allocs, lanePair{p: p + gpu.Ptr(stride), bytes: bytes, stride: stride})
	return p + gpu.Ptr(stride), nil
}

// find returns the allocation p lies in.
func (d *twoLanes) find(p gpu.Ptr) (lanePair, bool) {
	for _, a := range d.allocs {
		if p >= a.p && p < a.p+gpu.Ptr(a.bytes) {
			return a, true
		}
	}
	return lanePair{}, false
}

func (d *twoLanes) Free(p gpu.Ptr) error {
	for i, a := range d.allocs {
		if a.p == p {
			d.allocs = append(d.allocs[:i], d.allocs[i+1:]...)
			return d.Device.Free(p - gpu.Ptr(a.stride))
		}
	}
	return fmt.Errorf("gputest: free of %#x, not an allocation", uintptr(p))
}

// Upload writes src to lane 1's part and src rotated by 8 bytes (other
// values of the same type) to lane 0's.
func (d *twoLanes) Upload(dst gpu.Ptr, src []byte) error {
	a, ok := d.find(dst)
	if !ok {
		return fmt.Errorf("gputest: upload to %#x, not an allocation", uintptr(dst))
	}
	other := src
	if len(src) > 8 {
		other = append(append([]byte{}, src[8:]...), src[:8]...)
	}
	if err := d.Device.Upload(dst-gpu.Ptr(a.stride), other); err != nil {
		return err
	}
	return d.Device.Upload(dst, src)
}

// Launch runs the kernel on both lanes, lane 0's arguments given.
func (d *twoLanes) Launch(kernel string, threads int, args ...any) error {
	var strides gpu.Lanes
	k := 0
	lane0 := make([]any, len(args))
	for i, arg := range args {
		lane0[i] = arg
		p, isPtr := arg.(gpu.Ptr)
		if !isPtr {
			continue
		}
		if a, ok := d.find(p); ok {
			strides[k] = int64(a.stride)
			lane0[i] = p - gpu.Ptr(a.stride)
		}
		k++
	}
	return d.Device.LaunchLanes(kernel, threads, 2, strides, lane0...)
}

// Gemm makes the product of both lanes' matrices.
func (d *twoLanes) Gemm(dt gpu.Dtype, tA, tB bool, m, n, k int, alpha float64, a gpu.Ptr, lda int, b gpu.Ptr, ldb int, beta float64, c gpu.Ptr, ldc int) error {
	var strides [3]int
	ps := []*gpu.Ptr{&a, &b, &c}
	for i, p := range ps {
		if x, ok := d.find(*p); ok {
			strides[i] = x.stride / dt.Size()
			*p -= gpu.Ptr(x.stride)
		}
	}
	return d.Device.GemmStrided(dt, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, strides, 2)
}
