package ops

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func (op *copyOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	return copyOnDevice(op.dev, &op.out, op.name, vals[0])
}

// copyOnDevice copies the device value x into b's tensor: Copy's output,
// Keep's copy.
func copyOnDevice(d *Device, b *buffer, name string, x gorgonia.Value) (*tensor.Dense, error) {
	dt, n := x.Dtype(), x.Shape().TotalSize()
	l := d.launcher(dt)
	out := l.out(b, dt, x.Shape()...)
	if out != nil {
		l.run("copy", n, ptr(out), ptr(x), n)
	}
	if _, err := l.result(name, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Keep copies the values into a buffer of its own on the device, for
// package engine to read there or to Fetch to the host.
func (op *keepOp) deviceDo(vals []gorgonia.Value) (gorgonia.Value, error) {
	if op.kept.skip {
		op.kept.dev, op.kept.copy, op.kept.stale, op.kept.skipped = op.dev, nil, false, true
		if vals[0].Dtype() == tensor.Float32 {
			return gorgonia.NewF32(0), nil
		}
		return gorgonia.NewF64(0), nil
	}
	out, err := copyOnDevice(op.dev, &op.out, op.name, vals[0])
	if err != nil {
		return nil, err
	}
	op.kept.dev, op.kept.copy, op.kept.stale, op.kept.skipped = op.dev, out, true, false
	if out.Dtype() == tensor.Float32 {
		return gorgonia.NewF32(0), nil
	}
	return gorgonia.NewF64(0), nil
}
