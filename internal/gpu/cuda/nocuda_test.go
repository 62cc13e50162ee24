//go:build !gpu

package cuda_test

import (
	"errors"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
)

func TestOpenWithoutTag(t *testing.T) {
	if _, err := cuda.Open(0); !errors.Is(err, cuda.ErrNotBuilt) {
		t.Fatalf("Open in a build without -tags gpu: %v, want ErrNotBuilt", err)
	}
}
