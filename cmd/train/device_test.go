//go:build !gpu

package main

import (
	"errors"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
)

// In a build without -tags gpu, -device cuda is a usage error (status 2)
// that says how to build with CUDA; -device cpu opens nothing.
func TestDeviceCUDAWithoutTheBuild(t *testing.T) {
	dev, err := openDevice("cuda")
	var usage cli.UsageError
	if dev != nil || !errors.As(err, &usage) || !errors.Is(err, cuda.ErrNotBuilt) {
		t.Fatalf("openDevice(cuda) = %v, %v; want a usage error wrapping cuda.ErrNotBuilt", dev, err)
	}
	captureLog(t)
	if got := cli.Status(err); got != cli.ExitUsage {
		t.Errorf("exit status %d, want %d", got, cli.ExitUsage)
	}
	if dev, err := openDevice("cpu"); dev != nil || err != nil {
		t.Errorf("openDevice(cpu) = %v, %v", dev, err)
	}
}
