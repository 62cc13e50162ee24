//go:build gpu

package cuda_test

import (
	"os"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	"github.com/mtsgd/mtsgd/internal/gpu/gputest"
)

// open returns the first GPU, or skips the test with the reason there is
// none, unless MTSGD_REQUIRE_GPU=1 makes that a failure.
func open(t *testing.T) gpu.Device {
	t.Helper()
	dev, err := cuda.Open(0)
	if err != nil {
		if os.Getenv("MTSGD_REQUIRE_GPU") == "1" {
			t.Fatalf("MTSGD_REQUIRE_GPU=1 and no GPU: %v", err)
		}
		t.Skipf("no GPU: %v", err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("on %s", dev.Name())
	return dev
}

func TestKernels(t *testing.T) {
	gputest.Kernels(t, open(t))
}

func TestOpenRefusesMissingGPU(t *testing.T) {
	if _, err := cuda.Open(1 << 20); err == nil {
		t.Fatal("Open of GPU 1048576 succeeded")
	} else {
		t.Log(err)
	}
}
