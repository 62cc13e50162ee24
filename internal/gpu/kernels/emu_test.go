//go:build cgo

package kernels_test

import (
	"encoding/binary"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/gputest"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
)

func TestKernels(t *testing.T) {
	dev := kernels.NewEmulator()
	defer dev.Close()
	gputest.Kernels(t, dev)
	if n := dev.Live(); n != 0 {
		t.Errorf("%d allocations left after the checks", n)
	}
}

// A new allocation reads as NaNs in float32 and float64 alike, even when
// the C heap hands back memory freed a moment before with zeros in it.
func TestAllocationReadsNaN(t *testing.T) {
	dev := kernels.NewEmulator()
	defer dev.Close()
	zeros := make([]float64, 64)
	p, err := dev.Alloc(8 * len(zeros))
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Upload(p, gpu.Bytes(zeros)); err != nil {
		t.Fatal(err)
	}
	if err := dev.Free(p); err != nil {
		t.Fatal(err)
	}
	for _, bytes := range []int{8 * len(zeros), 4} {
		p, err := dev.Alloc(bytes)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, bytes)
		if err := dev.Download(got, p); err != nil {
			t.Fatal(err)
		}
		if err := dev.Free(p); err != nil {
			t.Fatal(err)
		}
		if f := math.Float32frombits(binary.LittleEndian.Uint32(got)); !math.IsNaN(float64(f)) {
			t.Errorf("%d bytes: the first float32 is %v, want NaN", bytes, f)
		}
		if bytes >= 8 {
			if f := math.Float64frombits(binary.LittleEndian.Uint64(got)); !math.IsNaN(f) {
				t.Errorf("%d bytes: the first float64 is %v, want NaN", bytes, f)
			}
		}
	}
}

// TestEveryKernelRegistered reads the kernel source: every kernel it
// defines must be launchable in the emulator (its table is written by
// hand), and the table must hold nothing else.
func TestEveryKernelRegistered(t *testing.T) {
	var want []string
	typed := regexp.MustCompile(`__global__ void K\((\w+)\)\(`)
	plain := regexp.MustCompile(`__global__ void ([a-z]\w*)\(`)
	for _, f := range []string{"typed.h", "all.h"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range typed.FindAllSubmatch(src, -1) {
			want = append(want, string(m[1])+"_f32", string(m[1])+"_f64")
		}
		for _, m := range plain.FindAllSubmatch(src, -1) {
			want = append(want, string(m[1]))
		}
	}
	slices.Sort(want)
	if got := kernels.Kernels(); !slices.Equal(got, want) {
		t.Errorf("emulated kernels %v\nsource defines %v", got, want)
	}
}

// TestEveryKernelLanes reads the kernel source: every kernel takes the
// lanes last and moves, first thing, each of its pointer parameters to
// its lane, in the order of the parameters (LANE), as package gpu's
// Lanes gives the strides of the Ptr arguments in order. (The kernel
// checks on two lanes, gputest, catch a pointer left out; not two
// swapped whose strides are equal.)
func TestEveryKernelLanes(t *testing.T) {
	kernel := regexp.MustCompile(`(?s)__global__ void (K\(\w+\)|\w+)\((.*?)\)\n\{\n\tLANE\(ln, ([^)]*)\);`)
	for _, f := range []string{"typed.h", "all.h"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all := regexp.MustCompile(`__global__ void`).FindAll(src, -1)
		found := kernel.FindAllSubmatch(src, -1)
		if len(found) != len(all) {
			t.Errorf("%s: %d kernels, %d of them begin with LANE", f, len(all), len(found))
		}
		for _, m := range found {
			params := strings.Split(string(m[2]), ",")
			if last := strings.TrimSpace(params[len(params)-1]); last != "struct lanes ln" {
				t.Errorf("%s: last parameter %q, want struct lanes ln", m[1], last)
			}
			var ptrs []string
			for _, p := range params {
				if i := strings.LastIndex(p, "*"); i >= 0 {
					ptrs = append(ptrs, strings.TrimSpace(p[i+1:]))
				}
			}
			if got := strings.Join(ptrs, ", "); got != string(m[3]) {
				t.Errorf("%s: LANE(ln, %s), want LANE(ln, %s)", m[1], m[3], got)
			}
		}
	}
}

// An ensemble's lanes (gpu.Ensemble) compute what each would alone: the
// same calls line up into one launch or strided-batched product per
// position, those that do not (another size in one lane) run lane by
// lane, uploads keep their place in their lane's order, and the lanes'
// allocations lie at one stride in one allocation of the device, freed
// with the last lane's part.
func TestEnsemble(t *testing.T) {
	emu := kernels.NewEmulator()
	defer emu.Close()
	count := gpu.NewCounting(emu)
	const lanes, n = 3, 6
	e, err := gpu.NewEnsemble(count, lanes)
	if err != nil {
		t.Fatal(err)
	}
	type bufs struct{ x, y, c gpu.Ptr }
	var bs []bufs
	for i := range lanes {
		l := e.Lane(i)
		var b bufs
		for _, p := range []*gpu.Ptr{&b.x, &b.y, &b.c} {
			if *p, err = l.Alloc(8 * n); err != nil {
				t.Fatal(err)
			}
		}
		bs = append(bs, b)
		x, y := make([]float64, n), make([]float64, n)
		for j := range n {
			x[j], y[j] = float64(i+j), float64(10*i-j)
		}
		must(t, l.Upload(b.x, gpu.Bytes(x)))
		must(t, l.Upload(b.y, gpu.Bytes(y)))
		must(t, l.Launch("axpy_f64", n, b.y, 2.0, b.x, n)) // y += 2x
		// c = y·xᵀ, y and x as 1×n rows.
		must(t, l.Gemm(gpu.Float64, false, true, 1, 1, n, 1, b.y, n, b.x, n, 0, b.c, 1))
		threads := n
		if i == 1 {
			threads = n - 1 // this lane scales one value fewer: no common launch
		}
		must(t, l.Launch("scale_f64", threads, b.x, 3.0, threads))
		x[0] = -1
		must(t, l.Upload(b.y+8, gpu.Bytes(x[:1]))) // after the product read y
	}
	// A shared input, uploaded alike by every lane: one upload, read
	// by one launch (at stride 0) into each lane's c.
	var shared gpu.Ptr
	for i := range lanes {
		l := e.Lane(i)
		p, err := l.AllocShared(8)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && p != shared {
			t.Fatalf("lane %d's shared allocation at %#x, lane 0's at %#x", i, uintptr(p), uintptr(shared))
		}
		shared = p
		must(t, l.Upload(p, gpu.Bytes([]float64{0.5})))
		must(t, l.Launch("axpy_f64", 1, bs[i].c, 2.0, p, 1)) // c += 1
	}
	// A shared buffer that every lane writes alike, by a launch whose
	// pointers are the same on each: one launch (three would make 13.5).
	var written gpu.Ptr
	for i := range lanes {
		l := e.Lane(i)
		p, err := l.AllocShared(8)
		if err != nil {
			t.Fatal(err)
		}
		written = p
		must(t, l.Upload(p, gpu.Bytes([]float64{0.5})))
		must(t, l.Launch("scale_f64", 1, p, 3.0, 1))
	}
	before := count.Counts()
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	got := count.Counts().Sub(before)
	if got.Launches != 3+lanes || got.Gemms != 1 || got.Uploads != 3*lanes+2 {
		t.Errorf("flush: %v; want %d launches, 1 GEMM, %d uploads", got, 3+lanes, 3*lanes+2)
	}
	w := make([]float64, 1)
	must(t, e.Lane(2).Download(gpu.Bytes(w), written))
	if w[0] != 1.5 {
		t.Errorf("the shared buffer every lane scaled by 3 holds %v, want 1.5", w[0])
	}
	for i, b := range bs {
		if d := b.x - bs[0].x; d != gpu.Ptr(i)*(bs[1].x-bs[0].x) {
			t.Errorf("lane %d's x at %#x from lane 0's, not at the stride", i, uintptr(d))
		}
		x, y, c := make([]float64, n), make([]float64, n), make([]float64, 1)
		must(t, e.Lane(i).Download(gpu.Bytes(x), b.x))
		must(t, e.Lane(i).Download(gpu.Bytes(y), b.y))
		must(t, e.Lane(i).Download(gpu.Bytes(c), b.c))
		var dot float64
		for j := range n {
			xj, yj := float64(i+j), float64(10*i-j)+2*float64(i+j)
			dot += xj * yj
			wantX := 3 * xj
			if i == 1 && j == n-1 {
				wantX = xj
			}
			if j == 1 {
				yj = -1
			}
			if x[j] != wantX || y[j] != yj {
				t.Errorf("lane %d: x[%d] = %v, y[%d] = %v; want %v, %v", i, j, x[j], j, y[j], wantX, yj)
			}
		}
		if dot++; c[0] != dot {
			t.Errorf("lane %d: product %v, want %v", i, c[0], dot)
		}
	}
	live := emu.Live()
	for i, b := range bs {
		for _, p := range []gpu.Ptr{b.x, b.y, b.c} {
			must(t, e.Lane(i).Free(p))
		}
	}
	for i := range lanes {
		must(t, e.Lane(i).Free(shared))
		must(t, e.Lane(i).Free(written))
	}
	if live != 5 || emu.Live() != 0 {
		t.Errorf("%d device allocations for the lanes' 15, %d after they freed them; want 5, 0", live, emu.Live())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryKernelInPTX reads the committed PTX (package gpu/cuda's
// kernels.ptx, which `go generate ./internal/gpu/cuda` makes with nvcc):
// every kernel of the source must have an entry there, so that a kernel
// added without remaking the PTX fails here, on any machine, and not at
// its first launch on a GPU (cuModuleGetFunction's "named symbol not
// found").
func TestEveryKernelInPTX(t *testing.T) {
	ptx, err := os.ReadFile("../cuda/kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]bool{}
	for _, m := range regexp.MustCompile(`\.entry (\w+)\(`).FindAllSubmatch(ptx, -1) {
		entries[string(m[1])] = true
	}
	for _, k := range kernels.Kernels() {
		if !entries[k] {
			t.Errorf("kernel %s is not in internal/gpu/cuda/kernels.ptx: remake it (go generate ./internal/gpu/cuda, docs/gpu.md)", k)
		}
	}
}
