//go:build !gpu

package cuda

import "github.com/mtsgd/mtsgd/internal/gpu"

const built = false

// Open returns ErrNotBuilt: this build has no GPU backend.
func Open(ordinal int) (gpu.Device, error) { return nil, ErrNotBuilt }
