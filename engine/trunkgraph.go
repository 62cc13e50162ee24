package engine

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// trunkGraph computes the trunk's vector-Jacobian product: the gradient
// of ⟨features, G⟩ with respect to the trunk, for a given G.
//
// When the trunk is built only of models/ops ops that can replay (LeNet,
// the MLP), the trunk graph replays the step graph's: it runs no forward
// pass and its gradients read what the step graph's run of the same
// particle kept, so a step costs one trunk forward per particle, not one
// per task. The machine guarantees what that needs: a trunk graph runs
// only right after the step graph of the same particle on the same batch.
// Otherwise (ResNet-18's batch norm) it computes the trunk forward again.
type trunkGraph struct {
	g         *gorgonia.ExprGraph
	dev       *ops.Device // nil on the CPU
	vm        gorgonia.VM
	vals      *values
	inputs    [3]binding // x, weight, G
	trunkGrad []*gorgonia.Node
	inner     *gorgonia.Node // ⟨features, G⟩, whose value no one reads
	replayed  bool
}

func newTrunkGraph(cfg *Config, rec *ops.Recording) (*trunkGraph, error) {
	if rec != nil {
		if tg, err := buildTrunkGraph(cfg, rec); err == nil {
			return tg, nil
		}
	}
	return buildTrunkGraph(cfg, nil)
}

// buildTrunkGraph builds the trunk graph, replaying rec unless it is nil;
// a replay fails unless it can stand in for the whole trunk.
func buildTrunkGraph(cfg *Config, rec *ops.Recording) (*trunkGraph, error) {
	g := gorgonia.NewGraph()
	tg := &trunkGraph{g: g, replayed: rec != nil}
	if cfg.Device != nil {
		tg.dev = ops.OnDevice(g, cfg.Device)
	}
	x, weight := inputNode(g, cfg), weightNode(g, cfg)
	vals, trunk, _, err := newValues(g, cfg, false, tg.dev)
	if err != nil {
		return nil, err
	}
	tg.vals = vals
	if rec != nil {
		ops.Replay(g, rec)
	}
	features, err := cfg.Model.Trunk(x, trunk, &models.Norm{Weight: weight})
	if rec != nil {
		if stop := ops.Stop(g); err == nil {
			err = stop
		}
	}
	if err != nil {
		return nil, err
	}
	upstream := gorgonia.NewTensor(g, cfg.Dtype, features.Dims(), gorgonia.WithShape(features.Shape()...), gorgonia.WithName("G"))
	inner, err := ops.Inner(features, upstream)
	if err != nil {
		return nil, err
	}
	tg.inner = inner
	if tg.trunkGrad, err = gorgonia.Grad(inner, trunk...); err != nil {
		return nil, fmt.Errorf("engine: trunk gradient: %w", err)
	}
	if tg.dev != nil {
		if err := tg.dev.OutputsTogether(tg.trunkGrad); err != nil {
			return nil, err
		}
	}
	tg.vm = newVM(g, tg.dev)
	tg.inputs = [3]binding{{node: x, dev: tg.dev, batch: true}, {node: weight, dev: tg.dev, batch: true}, {node: upstream, dev: tg.dev}}
	return tg, nil
}

// bind loads p (from rows, when set) and the batch in into the trunk
// graph, for vjp.
func (tg *trunkGraph) bind(p *Particle, rows *deviceRows, in *Inputs) error {
	if err := tg.vals.loadParticle(p, rows); err != nil {
		return err
	}
	if tg.dev != nil {
		// In a resident ensemble the product's value stays on the
		// device, where no one waits for it.
		var dst gpu.Ptr
		if rows != nil {
			dst = rows.discard
		}
		if err := ops.LossOnDevice(tg.inner, dst); err != nil {
			return err
		}
	}
	for i, src := range []*tensor.Dense{in.x, in.weight} {
		if tg.replayed && tg.inputs[i].val != nil {
			break // a replay reads no input but G; bound once, for the machine
		}
		if err := in.bind(&tg.inputs[i], src); err != nil {
			return err
		}
	}
	return nil
}

// vjp writes the gradient of ⟨features, upstream⟩ with respect to the
// bound particle's trunk into dst.
func (tg *trunkGraph) vjp(upstream, dst []float64) error {
	if err := tg.setUpstream(upstream); err != nil {
		return err
	}
	return run(tg.vm, func() error { return gather(tg.dev, tg.trunkGrad, dst) })
}

// vjpScore is vjp writing the negated gradient as out's trunk score of
// task j.
func (tg *trunkGraph) vjpScore(upstream []float64, out *Grads, j int) error {
	if err := tg.setUpstream(upstream); err != nil {
		return err
	}
	return run(tg.vm, func() error { return out.putTrunkScore(tg.dev, tg.trunkGrad, j) })
}

func (tg *trunkGraph) setUpstream(upstream []float64) error {
	g, err := tg.upstream()
	if err != nil {
		return err
	}
	return setOn(tg.dev, g, upstream)
}

// vjpOnDevice is vjp with upstream in the graph's device memory and
// a·the gradient written into the float64 vector at dst there.
func (tg *trunkGraph) vjpOnDevice(upstream *tensor.Dense, dst gpu.Ptr, a float64) error {
	g, err := tg.upstream()
	if err != nil {
		return err
	}
	if err := tg.dev.CopyTensor(g, upstream); err != nil {
		return err
	}
	return run(tg.vm, func() error { return storeTo(tg.dev, tg.trunkGrad, dst, a) })
}

// upstream returns the tensor bound to G, allocated on the first call.
func (tg *trunkGraph) upstream() (*tensor.Dense, error) {
	g := &tg.inputs[2]
	if g.val == nil {
		if tg.dev == nil {
			g.val = tensor.New(tensor.WithShape(g.node.Shape()...), tensor.Of(g.node.Dtype()))
		} else {
			t, err := tg.dev.Tensor(g.node.Dtype(), g.node.Shape()...)
			if err != nil {
				return nil, err
			}
			g.val = t
		}
		if err := gorgonia.Let(g.node, g.val); err != nil {
			return nil, err
		}
	}
	return g.val, nil
}
