package gpu

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Counts is what the host asked of a device: the calls of each kind and
// the bytes copied. On the CUDA device every call but Name makes the
// device's context current first (cuCtxSetCurrent), so the context
// switches are the sum of the calls.
type Counts struct {
	Allocs, Frees            int
	Uploads, UploadBytes     int
	Downloads, DownloadBytes int
	Launches, Gemms, Syncs   int
	// Kernels is the launches of each kernel, by name.
	Kernels map[string]int
}

// Calls is the number of calls that reach the device's driver.
func (c Counts) Calls() int {
	return c.Allocs + c.Frees + c.Uploads + c.Downloads + c.Launches + c.Gemms + c.Syncs
}

// Sub is c − o, kernel by kernel: what happened between two snapshots.
func (c Counts) Sub(o Counts) Counts {
	d := Counts{
		Allocs: c.Allocs - o.Allocs, Frees: c.Frees - o.Frees,
		Uploads: c.Uploads - o.Uploads, UploadBytes: c.UploadBytes - o.UploadBytes,
		Downloads: c.Downloads - o.Downloads, DownloadBytes: c.DownloadBytes - o.DownloadBytes,
		Launches: c.Launches - o.Launches, Gemms: c.Gemms - o.Gemms, Syncs: c.Syncs - o.Syncs,
		Kernels: map[string]int{},
	}
	for k, n := range c.Kernels {
		if n -= o.Kernels[k]; n != 0 {
			d.Kernels[k] = n
		}
	}
	for k, n := range o.Kernels {
		if _, ok := c.Kernels[k]; !ok {
			d.Kernels[k] = -n
		}
	}
	return d
}

// String lists the counts, the kernels by falling number of launches.
func (c Counts) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d launches, %d GEMMs, %d syncs, %d allocations, %d frees, %d uploads (%d B), %d downloads (%d B)",
		c.Launches, c.Gemms, c.Syncs, c.Allocs, c.Frees, c.Uploads, c.UploadBytes, c.Downloads, c.DownloadBytes)
	names := slices.Collect(maps.Keys(c.Kernels))
	slices.SortFunc(names, func(x, y string) int {
		if c.Kernels[x] != c.Kernels[y] {
			return c.Kernels[y] - c.Kernels[x]
		}
		return strings.Compare(x, y)
	})
	for i, k := range names {
		sep := "; "
		if i > 0 {
			sep = ", "
		}
		fmt.Fprintf(&b, "%s%s %d", sep, k, c.Kernels[k])
	}
	return b.String()
}

// Counting is a Device that counts the calls it passes on to another, to
// measure what a computation asks of the device on any machine (the
// emulator asks the same of the host as a GPU). Its methods may be called
// from several goroutines.
type Counting struct {
	Device
	mu sync.Mutex
	c  Counts
}

// NewCounting returns a Counting over dev, its counts zero.
func NewCounting(dev Device) *Counting {
	return &Counting{Device: dev, c: Counts{Kernels: map[string]int{}}}
}

// Counts returns a snapshot of the counts so far.
func (d *Counting) Counts() Counts {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.c
	c.Kernels = maps.Clone(d.c.Kernels)
	return c
}

func (d *Counting) count(f func(c *Counts)) {
	d.mu.Lock()
	f(&d.c)
	d.mu.Unlock()
}

func (d *Counting) Alloc(bytes int) (Ptr, error) {
	d.count(func(c *Counts) { c.Allocs++ })
	return d.Device.Alloc(bytes)
}

func (d *Counting) Free(p Ptr) error {
	d.count(func(c *Counts) { c.Frees++ })
	return d.Device.Free(p)
}

func (d *Counting) Upload(dst Ptr, src []byte) error {
	d.count(func(c *Counts) { c.Uploads++; c.UploadBytes += len(src) })
	return d.Device.Upload(dst, src)
}

func (d *Counting) Download(dst []byte, src Ptr) error {
	d.count(func(c *Counts) { c.Downloads++; c.DownloadBytes += len(dst) })
	return d.Device.Download(dst, src)
}

func (d *Counting) Launch(kernel string, threads int, args ...any) error {
	d.count(func(c *Counts) { c.Launches++; c.Kernels[kernel]++ })
	return d.Device.Launch(kernel, threads, args...)
}

func (d *Counting) Gemm(dt Dtype, tA, tB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int) error {
	d.count(func(c *Counts) { c.Gemms++ })
	return d.Device.Gemm(dt, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// LaunchLanes counts one launch, however many lanes.
func (d *Counting) LaunchLanes(kernel string, threads, lanes int, strides Lanes, args ...any) error {
	d.count(func(c *Counts) { c.Launches++; c.Kernels[kernel]++ })
	return d.Device.LaunchLanes(kernel, threads, lanes, strides, args...)
}

// GemmStrided counts one GEMM, however many matrices.
func (d *Counting) GemmStrided(dt Dtype, tA, tB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int, strides [3]int, batch int) error {
	d.count(func(c *Counts) { c.Gemms++ })
	return d.Device.GemmStrided(dt, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, strides, batch)
}

func (d *Counting) Sync() error {
	d.count(func(c *Counts) { c.Syncs++ })
	return d.Device.Sync()
}
