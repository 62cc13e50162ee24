//go:build cgo

package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
)

// TestStepOnDevice runs each optimiser on the emulated GPU and on the host
// with the same gradients: the parameters and, after Fetch, the states
// agree to 1e-14 relative (the kernels compute the same float64 formulas;
// the tolerance allows a compiler's fused multiply-add). Halfway the
// device's state is fetched into a fresh optimiser through State and
// SetState, and the run goes on on the host, then on the device again, as
// a checkpointed run resumed on the other device does.
func TestStepOnDevice(t *testing.T) {
	dev := kernels.NewEmulator()
	defer dev.Close()
	cases := []struct {
		name string
		new  func() DeviceOptimizer
	}{
		{"sgd", func() DeviceOptimizer { return &SGD{LR: 0.1} }},
		{"sgd-momentum", func() DeviceOptimizer { return &SGD{LR: 0.1, Momentum: 0.9} }},
		{"adam", func() DeviceOptimizer { return NewAdam(0.01) }},
	}
	const n, steps = 37, 6
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			x := make([]float64, n)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			host, onDev := c.new(), c.new()
			xHost := append([]float64(nil), x...)
			px, pg := alloc(t, dev, n), alloc(t, dev, n)
			upload(t, dev, px, x)
			for step := range 3 * steps {
				g := make([]float64, n)
				for i := range g {
					g[i] = rng.NormFloat64()
				}
				if err := host.Step(xHost, g); err != nil {
					t.Fatal(err)
				}
				if step < steps || step >= 2*steps {
					upload(t, dev, pg, g)
					if err := onDev.StepOnDevice(dev, px, pg, n); err != nil {
						t.Fatal(err)
					}
				} else {
					// The middle third on the host, from a fresh
					// optimiser given the device's state.
					if step == steps {
						download(t, dev, x, px)
						if err := onDev.Fetch(); err != nil {
							t.Fatal(err)
						}
						fresh := c.new()
						if err := fresh.SetState(onDev.State(), n); err != nil {
							t.Fatal(err)
						}
						if err := onDev.Release(); err != nil {
							t.Fatal(err)
						}
						onDev = fresh
					}
					if err := onDev.Step(x, g); err != nil {
						t.Fatal(err)
					}
					if step == 2*steps-1 {
						upload(t, dev, px, x)
					}
				}
			}
			download(t, dev, x, px)
			near(t, "x", x, xHost, 1e-14)
			if err := onDev.Fetch(); err != nil {
				t.Fatal(err)
			}
			near(t, "state", onDev.State(), host.State(), 1e-14)
			if err := onDev.Release(); err != nil {
				t.Fatal(err)
			}
			dev.Free(px)
			dev.Free(pg)
			if live := dev.Live(); live != 0 {
				t.Errorf("%d device buffers left", live)
			}
		})
	}
}

// TestStaleStatePanics checks that the host copy of a state the device
// has moved on cannot be read or stepped without a Fetch.
func TestStaleStatePanics(t *testing.T) {
	dev := kernels.NewEmulator()
	defer dev.Close()
	for _, o := range []DeviceOptimizer{&SGD{LR: 1, Momentum: 0.5}, NewAdam(1)} {
		px, pg := alloc(t, dev, 4), alloc(t, dev, 4)
		upload(t, dev, px, make([]float64, 4))
		upload(t, dev, pg, []float64{1, 2, 3, 4})
		if err := o.StepOnDevice(dev, px, pg, 4); err != nil {
			t.Fatal(err)
		}
		for what, use := range map[string]func(){
			"State": func() { o.State() },
			"Step":  func() { o.Step(make([]float64, 4), make([]float64, 4)) },
		} {
			func() {
				defer func() {
					if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "Fetch") {
						t.Errorf("%T.%s on a stale state: recovered %v, want a panic that says Fetch", o, what, r)
					}
				}()
				use()
			}()
		}
		if err := o.Release(); err != nil {
			t.Fatal(err)
		}
		if len(o.State()) == 0 {
			t.Errorf("%T: no state after Release", o)
		}
		dev.Free(px)
		dev.Free(pg)
	}
}

func alloc(t *testing.T, dev gpu.Device, n int) gpu.Ptr {
	t.Helper()
	p, err := dev.Alloc(8 * n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func upload(t *testing.T, dev gpu.Device, p gpu.Ptr, v []float64) {
	t.Helper()
	if err := dev.Upload(p, gpu.Bytes(v)); err != nil {
		t.Fatal(err)
	}
}

func download(t *testing.T, dev gpu.Device, v []float64, p gpu.Ptr) {
	t.Helper()
	if err := dev.Download(gpu.Bytes(v), p); err != nil {
		t.Fatal(err)
	}
}

// near fails unless got and want agree to tol relative to the largest
// |want|.
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}
