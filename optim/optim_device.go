package optim

import (
	"fmt"

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
