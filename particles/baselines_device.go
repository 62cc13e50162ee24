package particles

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// Grams implements DeviceRule: G = ΘΘᵀ, for the kernel.
func (r *SVGD) Grams(e DeviceEnsemble) []Gram {
	return []Gram{{X: e.Theta, Y: e.Theta, Rows: e.M, Cols: e.M}}
}

// DirectionOnDevice implements DeviceRule.
func (r *SVGD) DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	return directionOnDevice(r, "svgd", dev, dst, e)
}

// DirectionFromGrams implements DeviceRule.
func (r *SVGD) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, grams [][]float64) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("svgd: %w", err)
	}
	defer w.release()
	if err := checkGrams(grams, r.Grams(e)); err != nil {
		return fmt.Errorf("svgd: %w", err)
	}
	if r.w, err = fixedWeights(r.w, r.Weights, e.K); err != nil {
		return fmt.Errorf("svgd: %w", err)
	}
	km := &r.stein.km
	kernelFromGram(r.Kernel, km, grams[0], e.M)
	b, a := stein(km, r.w, r.Repulsion, e.M, new([]float64))
	if err := w.mix(dst, b, a); err != nil {
		return fmt.Errorf("svgd: %w", err)
	}
	return nil
}

// Grams implements DeviceRule: none.
func (r *Linear) Grams(DeviceEnsemble) []Gram { return nil }

// DirectionOnDevice implements DeviceRule.
func (r *Linear) DirectionOnDevice(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble) error {
	return directionOnDevice(r, "linear", dev, dst, e)
}

// DirectionFromGrams implements DeviceRule.
func (r *Linear) DirectionFromGrams(dev gpu.Device, dst gpu.Ptr, e DeviceEnsemble, grams [][]float64) error {
	w, err := newDeviceWork(dev, e)
	if err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	defer w.release()
	if err := checkGrams(grams, nil); err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	if r.w, err = fixedWeights(r.w, r.Weights, e.K); err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	if err := w.mix(dst, ownMix(e.M, e.K, func(_, i int) float64 { return r.w[i] }), nil); err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	return nil
}
