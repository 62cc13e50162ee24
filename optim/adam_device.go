package optim

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// StepOnDevice implements DeviceOptimizer. The moments are one buffer of
// 2n values on the device, m then v; the step count stays on the host.
func (o *Adam) StepOnDevice(dev gpu.Device, x, grad gpu.Ptr, n int) error {
	err := o.dev.prepare("adam", dev, 2*n, func(p gpu.Ptr) error {
		if o.m == nil {
			return dev.Launch("fill_f64", 2*n, p, 0.0, 2*n)
		}
		if len(o.m) != n {
			return fmt.Errorf("state for %d parameters, given %d", len(o.m), n)
		}
		if err := dev.Upload(p, gpu.Bytes(o.m)); err != nil {
			return err
		}
		return dev.Upload(p+gpu.Ptr(8*n), gpu.Bytes(o.v))
	})
	if err != nil {
		return err
	}
	o.t++
	c1 := 1 - math.Pow(o.Beta1, float64(o.t))
	c2 := 1 - math.Pow(o.Beta2, float64(o.t))
	m, v := o.dev.buf, o.dev.buf+gpu.Ptr(8*n)
	if err := dev.Launch("adam_f64", n, x, m, v, grad, o.LR, o.Beta1, o.Beta2, o.Eps, c1, c2, n); err != nil {
		return fmt.Errorf("adam: %w", err)
	}
	o.dev.hostStale = true
	return nil
}

// Fetch implements DeviceOptimizer.
func (o *Adam) Fetch() error {
	if !o.dev.hostStale {
		return nil
	}
	n := o.dev.size / 2
	state := make([]float64, 1+2*n)
	if err := o.dev.fetch("adam", state[1:]); err != nil {
		return err
	}
	o.setState(state)
	return nil
}

// Release implements DeviceOptimizer.
func (o *Adam) Release() error {
	if err := o.Fetch(); err != nil {
		return err
	}
	return o.dev.release()
}
