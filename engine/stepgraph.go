package engine

import (
	"fmt"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// stepGraph computes every task's loss on a batch and the gradients of
// the package doc; a heads-only one computes only the heads' gradients
// (a heads-first step's first evaluation, whose trunk gradients another
// replaces).
type stepGraph struct {
	tasks     []int // the tasks it computes; the slices below follow them
	headsOnly bool
	g         *gorgonia.ExprGraph
	dev       *ops.Device // nil on the CPU
	vm        gorgonia.VM
	vals      *values
	inputs    []binding // x, weight, then each task's target and loss weights
	// Copied out as a run computes them (gorgonia.Read, ops.Keep): the
	// tape machine reuses the memory of a node after its last use.
	losses       []*gorgonia.Value
	lossNodes    []*gorgonia.Node
	featureGrads []*ops.Kept       // tasks after the first: ∂loss/∂features
	features     *ops.Kept         // the trunk's output; nil without a trunk
	outputs      []*ops.Kept       // each task's head outputs
	stats        []*ops.BatchStats // each batch norm's, filled by a run
	spatial      []int             // each batch norm's H·W
	trunkGrad    []*gorgonia.Node  // the first task's
	trunkParams  []*gorgonia.Node  // the trunk's parameters, as trunkGrad lists their gradients
	headGrads    [][]*gorgonia.Node
	trunkOps     *ops.Recording // the trunk's ops, for the trunk graph to replay; nil in a replay
}

// newStepGraph builds the step graph of the tasks only; with replay, its
// trunk replays that recording's (ops.Replay) and computes nothing
// forward.
func newStepGraph(cfg *Config, only []int, headsOnly bool, replay *ops.Recording) (*stepGraph, error) {
	g := gorgonia.NewGraph()
	sg := &stepGraph{g: g, tasks: only, headsOnly: headsOnly}
	if cfg.Device != nil {
		sg.dev = ops.OnDevice(g, cfg.Device)
	}
	x, weight := inputNode(g, cfg), weightNode(g, cfg)
	sg.inputs = []binding{{node: x, dev: sg.dev, batch: true}, {node: weight, dev: sg.dev, batch: true}}
	vals, trunk, heads, err := newValues(g, cfg, true, sg.dev)
	if err != nil {
		return nil, err
	}
	sg.vals, sg.trunkParams = vals, trunk
	features, err := sg.trunkForward(cfg, x, weight, trunk, replay)
	if err != nil {
		return nil, err
	}
	tasks, err := sg.taskLosses(cfg, features, trunk, heads)
	if err != nil {
		return nil, err
	}
	featureGrads, err := sg.differentiate(cfg, tasks, len(trunk))
	if err != nil {
		return nil, err
	}
	if err := sg.keepOutputs(tasks, featureGrads, features, len(trunk) > 0); err != nil {
		return nil, err
	}
	sg.vm = newVM(g, sg.dev)
	return sg, nil
}

// trunkForward builds the trunk's forward pass on x, recording its ops
// for the trunk graphs to replay, or replaying replay's, and returns its
// features.
func (sg *stepGraph) trunkForward(cfg *Config, x, weight *gorgonia.Node, trunk []*gorgonia.Node, replay *ops.Recording) (*gorgonia.Node, error) {
	norm := &models.Norm{Weight: weight}
	if replay != nil {
		ops.Replay(sg.g, replay)
	} else {
		sg.trunkOps = ops.Record(sg.g)
	}
	features, err := cfg.Model.Trunk(x, trunk, norm)
	if err != nil {
		ops.Stop(sg.g)
		return nil, err
	}
	if err := ops.Stop(sg.g); err != nil {
		return nil, err
	}
	if 2*len(norm.Batch) != len(cfg.Model.TrunkStats()) {
		return nil, fmt.Errorf("engine: the trunk has %d batch norms, its model lists %d statistics", len(norm.Batch), len(cfg.Model.TrunkStats()))
	}
	sg.stats, sg.spatial = norm.Batch, norm.Spatial
	return features, nil
}

// taskNodes are one task's nodes in a step graph.
type taskNodes struct {
	loss, features *gorgonia.Node // features: the task's copy, j ≥ 1
	out            *gorgonia.Node
	wrt            []*gorgonia.Node
}

// taskLosses builds each task's head on the features and its loss
// (weighted per row by the task's own loss weights: a row without the
// task's label weighs 0), and
// says what each loss is differentiated with respect to: the first
// task's through the trunk, the others' through their own copy of the
// features.
func (sg *stepGraph) taskLosses(cfg *Config, features *gorgonia.Node, trunk []*gorgonia.Node, heads [][]*gorgonia.Node) ([]taskNodes, error) {
	tasks := make([]taskNodes, len(sg.tasks))
	for j, tj := range sg.tasks {
		t := cfg.Tasks[tj]
		target, lossWeight := targetNode(sg.g, cfg, tj), taskWeightNode(sg.g, cfg, tj)
		sg.inputs = append(sg.inputs, binding{node: target, dev: sg.dev, batch: true}, binding{node: lossWeight, dev: sg.dev, batch: true})
		in := features
		if j > 0 && len(trunk) > 0 && !sg.headsOnly {
			// Task j's own copy of the features.
			var err error
			if in, err = ops.Copy(features); err != nil {
				return nil, err
			}
			tasks[j].features = in
		}
		out, err := cfg.Model.Head(in, tj, heads[tj])
		if err != nil {
			return nil, err
		}
		tasks[j].out = out
		if tasks[j].loss, err = kindOf(t).loss(out, target, lossWeight); err != nil {
			return nil, fmt.Errorf("engine: task %s loss: %w", t.Name, err)
		}
		tasks[j].wrt = heads[tj]
		if j == 0 && !sg.headsOnly {
			tasks[j].wrt = append(slices.Clone(trunk), heads[tj]...)
		} else if tasks[j].features != nil {
			tasks[j].wrt = append([]*gorgonia.Node{in}, heads[tj]...)
		}
	}
	return tasks, nil
}

// differentiate adds each task's gradients to the graph and returns the
// gradients with respect to the tasks' copies of the features (nil for
// the first task).
func (sg *stepGraph) differentiate(cfg *Config, tasks []taskNodes, trunkParams int) ([]*gorgonia.Node, error) {
	// Differentiate the first task, through the trunk, last: Gorgonia's
	// analysis of a later Backpropagate fails on backward nodes that are
	// not symbolically differentiable ops (models/ops declares its own, but
	// a model may use Gorgonia's max-pooling), and Reads are added after
	// every Backpropagate, which refuses nodes only a Read consumes.
	sg.headGrads = make([][]*gorgonia.Node, len(tasks))
	sg.featureGrads = make([]*ops.Kept, len(tasks))
	featureGrads := make([]*gorgonia.Node, len(tasks))
	for j := len(tasks) - 1; j >= 0; j-- {
		grads, err := grad(tasks[j].loss, tasks[j].wrt)
		if err != nil {
			return nil, fmt.Errorf("engine: task %s gradient: %w", cfg.Tasks[sg.tasks[j]].Name, err)
		}
		switch {
		case j == 0 && !sg.headsOnly:
			sg.trunkGrad, grads = grads[:trunkParams], grads[trunkParams:]
		case tasks[j].features != nil:
			featureGrads[j], grads = grads[0], grads[1:]
		}
		sg.headGrads[j] = grads
	}
	if sg.dev != nil {
		// Each set of gradients in one buffer, for one kernel to store.
		for _, grads := range append([][]*gorgonia.Node{sg.trunkGrad}, sg.headGrads...) {
			if err := sg.dev.OutputsTogether(grads); err != nil {
				return nil, err
			}
		}
	}
	return featureGrads, nil
}

// keepOutputs adds the reads of what a step returns: the losses, the
// gradients with respect to the features' copies, each head's outputs and
// the trunk's features (the kernels over outputs read them, see
// Update.Kernel).
func (sg *stepGraph) keepOutputs(tasks []taskNodes, featureGrads []*gorgonia.Node, features *gorgonia.Node, hasTrunk bool) error {
	for j, t := range tasks {
		sg.losses = append(sg.losses, read(t.loss))
		sg.lossNodes = append(sg.lossNodes, t.loss)
		if featureGrads[j] != nil {
			var err error
			if sg.featureGrads[j], err = ops.Keep(featureGrads[j]); err != nil {
				return err
			}
		}
		kept, err := ops.Keep(t.out)
		if err != nil {
			return err
		}
		sg.outputs = append(sg.outputs, kept)
	}
	if hasTrunk {
		var err error
		if sg.features, err = ops.Keep(features); err != nil {
			return err
		}
	}
	return nil
}

// grad is gorgonia.Grad without its rule that one differentiates only
// with respect to input nodes: a task's copy of the features is not one.
func grad(loss *gorgonia.Node, wrt []*gorgonia.Node) (gorgonia.Nodes, error) {
	seed := loss.Graph().AddNode(gorgonia.NewConstant(models.Scalar(loss.Dtype(), 1)))
	return gorgonia.Backpropagate(gorgonia.Nodes{loss}, gorgonia.Nodes{seed}, wrt)
}

// runStep runs one step graph for p on in, writes what it computes into
// out and returns the gradients of the losses of its tasks after the
// first with respect to the features (none without a trunk), as the graph
// kept them until its next run.
func (m *machine) runStep(sg *stepGraph, p *Particle, in *Inputs, out *Grads) ([]*ops.Kept, error) {
	if err := sg.vals.loadParticle(p, out.rows); err != nil {
		return nil, err
	}
	if err := sg.leaveOnDevice(out.rows); err != nil {
		return nil, err
	}
	srcs := []*tensor.Dense{in.x, in.weight}
	for _, j := range sg.tasks {
		srcs = append(srcs, in.targets[j], in.taskWeight[j])
	}
	for i, src := range srcs {
		if err := in.bind(&sg.inputs[i], src); err != nil {
			return nil, err
		}
	}
	var features []*ops.Kept
	err := run(sg.vm, func() error {
		for i, j := range sg.tasks {
			if out.rows == nil {
				if err := copyValues(nil, []gorgonia.Value{*sg.losses[i]}, out.Loss[j:j+1]); err != nil {
					return err
				}
			}
			var err error
			switch {
			case out.rows != nil:
				err = storeTo(sg.dev, sg.headGrads[i], out.rows.headScore[j], 1)
			case out.scores:
				var finite bool
				finite, err = gatherScores(sg.dev, sg.headGrads[i], out.Head[j])
				out.notFinite[j][1] = !finite
			default:
				err = gather(sg.dev, sg.headGrads[i], out.Head[j])
			}
			if err != nil {
				return fmt.Errorf("task %s: %w", m.cfg.Tasks[j].Name, err)
			}
		}
		switch j := sg.tasks[0]; {
		case sg.headsOnly:
		case out.rows != nil:
			if err := storeTo(sg.dev, sg.trunkGrad, out.rows.trunkScore[j], 1); err != nil {
				return err
			}
		case out.scores:
			if err := out.putTrunkScore(sg.dev, sg.trunkGrad, j); err != nil {
				return err
			}
		default:
			if err := gather(sg.dev, sg.trunkGrad, out.Trunk[j]); err != nil {
				return err
			}
		}
		if out.rows == nil {
			if err := copyStats(sg.stats, out.Stats); err != nil {
				return err
			}
			if err := m.copyOutputs(sg, out); err != nil {
				return err
			}
		}
		for _, fg := range sg.featureGrads[1:] {
			if fg != nil {
				features = append(features, fg)
			}
		}
		return nil
	})
	return features, err
}

// leaveOnDevice has the graph's next runs leave their losses and batch
// statistics in rows' places on the device (the resident ensemble reads
// them back after every particle's runs) and keep no features or outputs
// (which only the kernels over outputs read, never resident), or, with
// rows nil, copy the former to the host as they are computed and keep
// the latter.
func (sg *stepGraph) leaveOnDevice(rows *deviceRows) error {
	if sg.dev == nil {
		return nil
	}
	for _, k := range append([]*ops.Kept{sg.features}, sg.outputs...) {
		if k != nil {
			k.Skip(rows != nil)
		}
	}
	for i, j := range sg.tasks {
		var dst gpu.Ptr
		if rows != nil {
			dst = rows.loss + gpu.Ptr(8*j)
		}
		if err := ops.LossOnDevice(sg.lossNodes[i], dst); err != nil {
			return err
		}
	}
	at := 0
	for _, st := range sg.stats {
		var dst gpu.Ptr
		if rows != nil {
			dst = rows.stats + gpu.Ptr(8*at)
		}
		st.KeepOnDevice(dst)
		at += len(st.Mean) + len(st.Variance)
	}
	return nil
}

// copyOutputs copies the features and head outputs the step graph kept
// into out, for the kernels over outputs.
func (m *machine) copyOutputs(sg *stepGraph, out *Grads) error {
	if sg.features != nil {
		if err := sg.features.Fetch(); err != nil {
			return err
		}
		out.Features = append(out.Features[:0], sg.features.Values...)
	}
	if out.Outputs == nil {
		out.Outputs = make([][]float64, len(m.cfg.Tasks))
	}
	for i, j := range sg.tasks {
		if err := sg.outputs[i].Fetch(); err != nil {
			return err
		}
		out.Outputs[j] = append(out.Outputs[j][:0], sg.outputs[i].Values...)
	}
	return nil
}

// read adds a Read of n to its graph and returns the place it fills.
func read(n *gorgonia.Node) *gorgonia.Value {
	v := new(gorgonia.Value)
	gorgonia.Read(n, v)
	return v
}
