//go:build !gpu

package cuda

import (
	"errors"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// ErrNotBuilt is Open's error in a build without -tags gpu.
var ErrNotBuilt = errors.New("this binary was built without CUDA support: build it with -tags gpu (see the README's GPU section)")

// Open returns ErrNotBuilt: this build has no GPU backend.
func Open(ordinal int) (gpu.Device, error) { return nil, ErrNotBuilt }
