package engine

import (
	"context"
	"errors"
	"fmt"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
)

// outputsOnDevice is Outputs with the graphs on a device: each batch's
// outputs stay there, widened to float64 into one buffer (task by task,
// particle by particle, example by example) that comes back in one copy
// at the end, where Predict brings every particle's outputs of every
// task back after each batch. The values are Predict's: the same
// outputs, widened as getFloats widens them, turned into predictions by
// the same taskKind.predict on the host.
func (tr *Trainer) outputsOnDevice(ctx context.Context, d data.Dataset) (out [][][]float64, labels [][]float64, err error) {
	if err := tr.settle(); err != nil {
		return nil, nil, err
	}
	dev := tr.cfg.Device
	k, m, n := len(tr.cfg.Tasks), len(tr.Particles), d.Len()
	base := make([][]int, k) // where task j's outputs of particle i begin, in values
	total := 0
	for j, t := range tr.cfg.Tasks {
		base[j] = make([]int, m)
		for i := range m {
			base[j][i] = total
			total += n * outputs(t)
		}
	}
	buf, err := dev.Alloc(8 * max(total, 1))
	if err != nil {
		return nil, nil, fmt.Errorf("engine: the outputs of %s on %s: %w", d.Name(), dev.Name(), err)
	}
	defer func() {
		if ferr := dev.Free(buf); err == nil && ferr != nil {
			err = ferr
		}
	}()
	labels = make([][]float64, k)
	for j := range labels {
		labels[j] = make([]float64, 0, n)
	}
	offset := 0
	batches := data.Epoch(d, tr.cfg.Batch, false, 0, 0)
	for batches.Next() {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		b := batches.Batch()
		if err := tr.in.Load(tr.cfg, b); err != nil {
			return nil, nil, err
		}
		err := tr.parallel(m, func(w, i int) error {
			var rows *deviceRows
			if tr.res != nil {
				rows = &tr.res.rows[i]
			}
			dst := make([]gpu.Ptr, k)
			for j, t := range tr.cfg.Tasks {
				dst[j] = buf + gpu.Ptr(8*(base[j][i]+offset*outputs(t)))
			}
			if err := tr.machines[w].predictInto(tr.Particles[i], rows, tr.in, dst); err != nil {
				return fmt.Errorf("particle %d: %w", i, err)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		for j := range tr.cfg.Tasks {
			for _, y := range b.Targets[j] {
				labels[j] = append(labels[j], float64(y))
			}
		}
		offset += b.Size()
	}
	if err := batches.Err(); err != nil {
		return nil, nil, err
	}
	host := make([]float64, total)
	if err := dev.Download(gpu.Bytes(host), buf); err != nil {
		return nil, nil, fmt.Errorf("engine: the outputs of %s: %w", d.Name(), err)
	}
	out = make([][][]float64, k)
	for j, t := range tr.cfg.Tasks {
		out[j] = make([][]float64, m)
		for i := range m {
			raw := host[base[j][i] : base[j][i]+n*outputs(t)]
			out[j][i] = make([]float64, len(raw))
			kindOf(t).predict(t, out[j][i], raw)
		}
	}
	return out, labels, nil
}

// predictInto is predict with the outputs left on the device: task j's
// outputs of the in.N real examples, widened to float64, at dst[j].
func (m *machine) predictInto(p *Particle, rows *deviceRows, in *Inputs, dst []gpu.Ptr) error {
	pg := m.prediction
	if pg.dev == nil {
		return errors.New("engine: outputs kept on a device by graphs on the CPU")
	}
	if err := pg.vals.loadParticle(p, rows); err != nil {
		return err
	}
	if err := pg.input.set(in.x, in.version); err != nil {
		return err
	}
	widen := "widen" + gpu.Float64.Suffix()
	if m.cfg.Dtype == tensor.Float32 {
		widen = "widen" + gpu.Float32.Suffix()
	}
	return run(pg.vm, func() error {
		for j, out := range pg.outs {
			v := out.Value()
			if !pg.dev.Owns(v) {
				return fmt.Errorf("engine: task %s's outputs are not in the device's memory", m.cfg.Tasks[j].Name)
			}
			n := in.N * outputs(m.cfg.Tasks[j])
			if err := pg.dev.GPU().Launch(widen, n, dst[j], gpu.Ptr(v.Uintptr()), n); err != nil {
				return err
			}
		}
		return nil
	})
}
