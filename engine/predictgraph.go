package engine

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/models"
)

// predictGraph computes every head's outputs on a batch, without
// gradients, normalising with the running statistics.
type predictGraph struct {
	g         *gorgonia.ExprGraph
	vm        gorgonia.VM
	vals      *values
	input     binding
	outs      []*gorgonia.Node
	outValues [][]float64
}

func newPredictGraph(cfg *Config) (*predictGraph, error) {
	g := gorgonia.NewGraph()
	pg := &predictGraph{g: g}
	x := inputNode(g, cfg)
	vals, trunk, heads, err := newValues(g, cfg, true, nil)
	if err != nil {
		return nil, err
	}
	if vals.stats, err = newTensors(cfg.Model.TrunkStats(), cfg.Dtype, nil); err != nil {
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
	pg.vm = newVM(g, nil)
	pg.input = binding{node: x}
	return pg, nil
}

// predict evaluates every head of p on in and returns, per task, the
// outputs of the in.N real examples, row-major (N × outputs): logits for a
// classification task, predictions for a regression task. The slices are
// reused by the next call.
func (m *machine) predict(p *Particle, in *Inputs) ([][]float64, error) {
	pg := m.prediction
	if err := pg.vals.load(p); err != nil {
		return nil, err
	}
	if err := pg.input.set(in.x, in.version); err != nil {
		return nil, err
	}
	err := run(pg.vm, func() error {
		for j, out := range pg.outs {
			if err := getFloats(nil, out.Value(), pg.outValues[j]); err != nil {
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
