package optim

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// DeviceOptimizer is an Optimizer that can also step a vector held in a
// GPU's memory (package internal/gpu, float64), with the kernels sgd and
// adam, which compute the same formulas as Step.
//
// Its state then lives on the device: the first StepOnDevice uploads it,
// later ones keep it there, and the host copy that State, SetState and
// Step use is stale until Fetch brings it back. Calling State or Step on
// a stale host copy is a programmer error and panics; SetState replaces
// the state on both sides (the device's is uploaded by the next
// StepOnDevice).
type DeviceOptimizer interface {
	Optimizer
	// StepOnDevice updates the n values at x in place from grad, both on
	// dev.
	StepOnDevice(dev gpu.Device, x, grad gpu.Ptr, n int) error
	// Fetch copies the state from the device to the host; the device
	// keeps its copy for the next StepOnDevice.
	Fetch() error
	// Release fetches the state and frees its device memory.
	Release() error
}

// onDevice is the bookkeeping of an optimiser's state on a device: a
// buffer of size float64 values, and which side has the newer copy.
type onDevice struct {
	dev       gpu.Device
	buf       gpu.Ptr
	size      int
	hostStale bool // the device has steps the host has not fetched
	devStale  bool // the host state was set or stepped after the upload
}

// prepare makes the device hold the state of size values for dev,
// calling upload to copy the host's in when the device's copy is missing
// or older.
func (s *onDevice) prepare(name string, dev gpu.Device, size int, upload func(gpu.Ptr) error) error {
	if s.dev != nil && (s.dev != dev || s.size != size) {
		return fmt.Errorf("%s: a state of %d values on %s, asked for %d on %s", name, s.size, s.dev.Name(), size, dev.Name())
	}
	if s.dev == nil {
		p, err := dev.Alloc(8 * max(size, 1))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.dev, s.buf, s.size, s.devStale = dev, p, size, true
	}
	if s.devStale {
		if err := upload(s.buf); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.devStale = false
	}
	return nil
}

// fetch downloads the state into host when the host copy is stale.
func (s *onDevice) fetch(name string, host []float64) error {
	if !s.hostStale {
		return nil
	}
	if err := s.dev.Download(gpu.Bytes(host), s.buf); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	s.hostStale = false
	return nil
}

// release frees the device memory; the host copy must be current.
func (s *onDevice) release() error {
	if s.dev == nil {
		return nil
	}
	err := s.dev.Free(s.buf)
	*s = onDevice{}
	return err
}

// hostChanged records that the host copy is the newer one.
func (s *onDevice) hostChanged() { s.devStale, s.hostStale = s.dev != nil, false }

// mustBeCurrent panics if the host copy is stale.
func (s *onDevice) mustBeCurrent(name string) {
	if s.hostStale {
		panic(name + ": the state is on the device; Fetch it before using it on the host")
	}
}

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
