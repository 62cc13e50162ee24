package engine

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// predictGraph computes every head's outputs on a batch, without
// gradients, normalising with the running statistics.
type predictGraph struct {
	g         *gorgonia.ExprGraph
	dev       *ops.Device // nil on the CPU
	vm        gorgonia.VM
	vals      *values
	input     binding
	outs      []*gorgonia.Node
	outValues [][]float64
}

func newPredictGraph(cfg *Config) (*predictGraph, error) {
	g := gorgonia.NewGraph()
	pg := &predictGraph{g: g}
	if cfg.Device != nil {
		pg.dev = ops.OnDevice(g, cfg.Device)
	}
	x := inputNode(g, cfg)
	vals, trunk, heads, err := newValues(g, cfg, true, pg.dev)
	if err != nil {
		return nil, err
	}
	if vals.stats, err = newTensors(cfg.Model.TrunkStats(), cfg.Dtype, pg.dev); err != nil {
		return nil, err
	}
	pg.vals = vals
	features, err := cfg.Model.Trunk(x, trunk, &models.Norm{Running: paramNodes(g, cfg.Model.TrunkStats(), vals.stats)})
	if err != nil {
		return nil, err
	}
	for j, t := range cfg.Tasks {
		out, err := cfg.Model.Head(features, j, heads[j])
		if err != nil {
			return nil, err
		}
		pg.outs = append(pg.outs, out)
		pg.outValues = append(pg.outValues, make([]float64, cfg.Batch*outputs(t)))
	}
	pg.vm = newVM(g, pg.dev)
	pg.input = binding{node: x, dev: pg.dev}
	return pg, nil
}

// predict evaluates every head of p on in and returns, per task, the
// outputs of the in.N real examples, row-major (N × outputs): logits for a
// classification task, predictions for a regression task. The slices are
// reused by the next call. With rows (an ensemble held on the device) the
// parameters are read from there.
func (m *machine) predict(p *Particle, rows *deviceRows, in *Inputs) ([][]float64, error) {
	pg := m.prediction
	if err := pg.vals.loadParticle(p, rows); err != nil {
		return nil, err
	}
	if err := pg.input.set(in.x, in.version); err != nil {
		return nil, err
	}
	err := run(pg.vm, func() error {
		for j, out := range pg.outs {
			if err := getFloats(pg.dev, out.Value(), pg.outValues[j]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := make([][]float64, len(pg.outs))
	for j, t := range m.cfg.Tasks {
		res[j] = pg.outValues[j][:in.N*outputs(t)]
	}
	return res, nil
}
