package gpu

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// fake is a Device that records the calls that reach it.
type fake struct {
	calls []string
}

func (f *fake) Name() string               { return "fake" }
func (f *fake) Alloc(int) (Ptr, error)     { f.calls = append(f.calls, "alloc"); return 8, nil }
func (f *fake) Free(Ptr) error             { f.calls = append(f.calls, "free"); return nil }
func (f *fake) Upload(Ptr, []byte) error   { f.calls = append(f.calls, "upload"); return nil }
func (f *fake) Download([]byte, Ptr) error { f.calls = append(f.calls, "download"); return nil }
func (f *fake) Sync() error                { f.calls = append(f.calls, "sync"); return errors.New("sync failed") }
func (f *fake) Close() error               { return nil }
func (f *fake) Launch(k string, _ int, _ ...any) error {
	f.calls = append(f.calls, k)
	return nil
}
func (f *fake) Gemm(Dtype, bool, bool, int, int, int, float64, Ptr, int, Ptr, int, float64, Ptr, int) error {
	f.calls = append(f.calls, "gemm")
	return nil
}
func (f *fake) LaunchLanes(k string, _, _ int, _ Lanes, _ ...any) error {
	f.calls = append(f.calls, k)
	return nil
}
func (f *fake) GemmStrided(Dtype, bool, bool, int, int, int, float64, Ptr, int, Ptr, int, float64, Ptr, int, [3]int, int) error {
	f.calls = append(f.calls, "gemm")
	return nil
}

// Counting counts each call and the bytes copied, passes every call on,
// with its error, and Sub gives what happened between two snapshots.
func TestCounting(t *testing.T) {
	f := &fake{}
	d := NewCounting(f)
	p, _ := d.Alloc(16)
	d.Upload(p, make([]byte, 16))
	d.Launch("fill_f64", 2, p, 1.0, 2)
	before := d.Counts()
	d.Launch("fill_f64", 2, p, 1.0, 2)
	d.Launch("scale_f64", 2, p, 2.0, 2)
	d.Gemm(Float64, false, false, 1, 1, 2, 1, p, 2, p, 1, 0, p, 1)
	// A launch or product over several lanes is one.
	d.LaunchLanes("scale_f64", 2, 3, Lanes{8}, p, 2.0, 2)
	d.GemmStrided(Float64, false, false, 1, 1, 2, 1, p, 2, p, 1, 0, p, 1, [3]int{2, 2, 1}, 3)
	d.Download(make([]byte, 8), p)
	d.Download(make([]byte, 3), p)
	if err := d.Sync(); err == nil || err.Error() != "sync failed" {
		t.Errorf("Sync returned %v, want the device's error", err)
	}
	d.Free(p)
	got := d.Counts()
	want := Counts{Allocs: 1, Frees: 1, Uploads: 1, UploadBytes: 16, Downloads: 2, DownloadBytes: 11,
		Launches: 4, Gemms: 2, Syncs: 1, Kernels: map[string]int{"fill_f64": 2, "scale_f64": 2}}
	if !equalCounts(got, want) {
		t.Errorf("counts %v\nwant   %v", got, want)
	}
	if n := got.Calls(); n != len(f.calls) {
		t.Errorf("Calls() = %d; %d calls reached the device (%v)", n, len(f.calls), f.calls)
	}
	diff := got.Sub(before)
	wantDiff := Counts{Frees: 1, Downloads: 2, DownloadBytes: 11, Launches: 3, Gemms: 2, Syncs: 1,
		Kernels: map[string]int{"fill_f64": 1, "scale_f64": 2}}
	if !equalCounts(diff, wantDiff) {
		t.Errorf("difference %v\nwant       %v", diff, wantDiff)
	}
	if s := diff.String(); !strings.Contains(s, "3 launches") || !strings.HasSuffix(s, "; scale_f64 2, fill_f64 1") {
		t.Errorf("String() = %q", s)
	}
	// A snapshot does not change with later calls.
	d.Launch("fill_f64", 2, p, 1.0, 2)
	if got.Kernels["fill_f64"] != 2 {
		t.Errorf("a snapshot's kernel count changed to %d", got.Kernels["fill_f64"])
	}
}

func equalCounts(a, b Counts) bool {
	return a.Allocs == b.Allocs && a.Frees == b.Frees && a.Uploads == b.Uploads && a.UploadBytes == b.UploadBytes &&
		a.Downloads == b.Downloads && a.DownloadBytes == b.DownloadBytes &&
		a.Launches == b.Launches && a.Gemms == b.Gemms && a.Syncs == b.Syncs && maps.Equal(a.Kernels, b.Kernels)
}
