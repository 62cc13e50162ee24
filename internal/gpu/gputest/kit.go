package gputest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// kit holds one check's device buffers and helpers.
type kit struct {
	t     *testing.T
	dev   gpu.Device
	dt    gpu.Dtype
	rng   *rand.Rand
	alloc []gpu.Ptr
}

// randoms returns n values uniform in [lo, hi), rounded to the dtype.
func (k *kit) randoms(n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = k.round(lo + (hi-lo)*k.rng.Float64())
	}
	return v
}

func (k *kit) round(x float64) float64 {
	if k.dt == gpu.Float32 {
		return float64(float32(x))
	}
	return x
}

// upload copies v to a new device buffer in the check's dtype.
func (k *kit) upload(v []float64) gpu.Ptr { return k.uploadAs(k.dt, v) }

// uploadAs copies v to a new device buffer of dtype dt.
func (k *kit) uploadAs(dt gpu.Dtype, v []float64) gpu.Ptr {
	k.t.Helper()
	p := k.buffer(dt, len(v))
	var err error
	if dt == gpu.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		err = k.dev.Upload(p, gpu.Bytes(f))
	} else {
		err = k.dev.Upload(p, gpu.Bytes(v))
	}
	if err != nil {
		k.t.Fatal(err)
	}
	return p
}

// buffer allocates n elements of dt.
func (k *kit) buffer(dt gpu.Dtype, n int) gpu.Ptr {
	k.t.Helper()
	p, err := k.dev.Alloc(max(1, n) * dt.Size())
	if err != nil {
		k.t.Fatal(err)
	}
	k.alloc = append(k.alloc, p)
	return p
}

// download reads n elements of the check's dtype.
func (k *kit) download(p gpu.Ptr, n int) []float64 { return k.downloadAs(k.dt, p, n) }

func (k *kit) downloadAs(dt gpu.Dtype, p gpu.Ptr, n int) []float64 {
	k.t.Helper()
	if err := k.dev.Sync(); err != nil {
		k.t.Fatal(err)
	}
	out := make([]float64, n)
	if dt == gpu.Float32 {
		f := make([]float32, n)
		if err := k.dev.Download(gpu.Bytes(f), p); err != nil {
			k.t.Fatal(err)
		}
		for i, x := range f {
			out[i] = float64(x)
		}
		return out
	}
	if err := k.dev.Download(gpu.Bytes(out), p); err != nil {
		k.t.Fatal(err)
	}
	return out
}

func (k *kit) downloadInts(p gpu.Ptr, n int) []int32 {
	k.t.Helper()
	out := make([]int32, n)
	if err := k.dev.Download(gpu.Bytes(out), p); err != nil {
		k.t.Fatal(err)
	}
	return out
}

// launch runs the typed kernel name (the dtype's suffix added).
func (k *kit) launch(name string, threads int, args ...any) {
	k.t.Helper()
	k.launchRaw(name+k.dt.Suffix(), threads, args...)
}

func (k *kit) launchRaw(name string, threads int, args ...any) {
	k.t.Helper()
	if err := k.dev.Launch(name, threads, args...); err != nil {
		k.t.Fatal(err)
	}
}

func (k *kit) freeAll() {
	for _, p := range k.alloc {
		if err := k.dev.Free(p); err != nil {
			k.t.Error(err)
		}
	}
}

// tol is the relative tolerance of the dtype (see the package doc).
func (k *kit) tol() float64 {
	if k.dt == gpu.Float32 {
		return 2e-6
	}
	return 1e-12
}

// near fails unless got and want agree to the dtype's tolerance relative
// to the largest |want| (so that values near 0 among large ones are
// judged on the scale of the result).
func (k *kit) near(what string, got, want []float64) {
	k.t.Helper()
	if len(got) != len(want) {
		k.t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= k.tol()*scale) {
			k.t.Fatalf("%s[%d] = %.17g, want %.17g (|Δ| %.3g > %.3g·%.3g)", what, i, got[i], want[i], d, k.tol(), scale)
		}
	}
}

// same fails unless got and want are equal (values the kernel only moves).
func (k *kit) same(what string, got, want []float64) {
	k.t.Helper()
	for i := range want {
		if got[i] != want[i] {
			k.t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func (k *kit) nearTol(what string, got, want []float64, tol float64) {
	k.t.Helper()
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			k.t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}
