package particles

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// Grams implements DeviceRule: none.
func (Warmup) Grams(DeviceEnsemble) []Gram { return nil }

// DirectionOnDevice implements DeviceRule.
func (r Warmup) DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	return directionOnDevice(r, "warm-up", dev, dst, e)
}

// DirectionFromGrams implements DeviceRule.
func (Warmup) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, grams [][]float64) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	defer w.release()
	if err := checkGrams(grams, nil); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	weight := func(a, i int) float64 { return WarmupWeight(a, e.M, e.K, i) / float64(e.M) }
	if err := w.mix(dst, ownMix(e.M, e.K, weight), nil); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	return nil
}
