package optim

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// StepOnDevice implements DeviceOptimizer.
func (o *SGD) StepOnDevice(dev gpu.Device, x, grad gpu.Ptr, n int) error {
	if o.Momentum == 0 {
		return dev.Launch("sgd_f64", n, x, gpu.Ptr(0), grad, o.LR, 0.0, 0, n)
	}
	first := o.buf == nil && !o.dev.hostStale
	err := o.dev.prepare("sgd", dev, n, func(p gpu.Ptr) error {
		if o.buf == nil {
			return nil // the first step sets the buffer
		}
		if len(o.buf) != n {
			return fmt.Errorf("state for %d parameters, given %d", len(o.buf), n)
		}
		return dev.Upload(p, gpu.Bytes(o.buf))
	})
	if err != nil {
		return err
	}
	flag := 0
	if first {
		flag = 1
	}
	if err := dev.Launch("sgd_f64", n, x, o.dev.buf, grad, o.LR, o.Momentum, flag, n); err != nil {
		return fmt.Errorf("sgd: %w", err)
	}
	o.dev.hostStale = true
	return nil
}

// Fetch implements DeviceOptimizer.
func (o *SGD) Fetch() error {
	if o.dev.hostStale && len(o.buf) != o.dev.size {
		o.buf = make([]float64, o.dev.size)
	}
	return o.dev.fetch("sgd", o.buf)
}

// Release implements DeviceOptimizer.
func (o *SGD) Release() error {
	if err := o.Fetch(); err != nil {
		return err
	}
	return o.dev.release()
}
