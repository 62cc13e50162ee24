//go:build cgo

package kernels_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

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
