// Package engine trains and evaluates ensembles of network particles on
// Gorgonia. Each particle is a multi-task network (package models); the
// engine builds each worker's autodiff graphs, computes every particle's
// task losses and gradients, hands them as flat vectors to the update
// rules of package particles, which decide the directions, steps the
// optimisers (package optim) and scores the particles and their ensemble.
// Package experiment runs the epochs, checkpoints and resume around it.
//
// A particle is its parameters as float64 vectors, the trunk α and one
// head βʲ per task (and the running statistics of batch normalisation).
// The Gorgonia graphs belong to a machine, one per worker, which copies a
// particle's vectors into them for each run; so memory grows with the
// workers, not with the particles or the tasks. A machine has three
// graphs:
//
//   - the step graph runs the trunk once and every head and loss on its
//     features, and differentiates: task 0's loss with respect to the trunk
//     and head 0; task j's (j ≥ 1) with respect to head j and to the
//     features, through a copy of them of its own;
//   - the trunk graph runs the trunk again and differentiates ⟨features, G⟩
//     with respect to the trunk for a given G: with G the gradient of task
//     j's loss with respect to the features, that is task j's trunk
//     gradient (a vector-Jacobian product), one run per task j ≥ 1;
//   - the prediction graph runs the trunk and every head without
//     gradients, batch normalisation using the running statistics.
//
// Why so: MT-SGD needs each task's trunk gradient separately. Gorgonia's
// symbolic differentiation keeps one derivative per node, so a second Grad
// in one graph returns the first loss's gradient for every node the two
// losses share (docs/gorgonia-pitfalls.md); a node that only one loss
// reaches, like a task's own copy of the features, is differentiated
// correctly. A step costs K trunk passes forward and backward per
// particle, as K separate task graphs would, in two graphs instead of K.
// The tests check each gradient against finite differences and their sum
// against the summed loss.
//
// Batch normalisation: the step and trunk graphs normalise with the
// batch's statistics (training mode), and the step graph reports them so
// that the running statistics move once per step, as PyTorch's forward
// pass in training mode does.
package engine

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models"
)

// Config describes the networks of an ensemble and the batches they see.
type Config struct {
	Model models.Model
	Tasks []data.Task
	// Batch is the number of examples in one graph run; smaller batches
	// are padded with examples of weight zero.
	Batch int
	// Dtype of the graphs: tensor.Float32 (fast) or tensor.Float64
	// (exact enough for finite-difference tests).
	Dtype tensor.Dtype
}

func (c *Config) check() error {
	switch {
	case c.Model == nil:
		return fmt.Errorf("engine: no model")
	case len(c.Tasks) == 0:
		return fmt.Errorf("engine: no tasks")
	case c.Batch < 1:
		return fmt.Errorf("engine: batch size %d", c.Batch)
	case c.Dtype != tensor.Float32 && c.Dtype != tensor.Float64:
		return fmt.Errorf("engine: dtype %v, want float32 or float64", c.Dtype)
	}
	for j, t := range c.Tasks {
		if t.Kind == data.Classification && t.Classes < 2 {
			return fmt.Errorf("engine: task %s has %d classes", t.Name, t.Classes)
		}
		if t.Kind != data.Classification && t.Kind != data.Regression {
			return fmt.Errorf("engine: task %d has kind %v", j, t.Kind)
		}
	}
	return nil
}

// outputs is the width of task t's head.
func outputs(t data.Task) int {
	if t.Kind == data.Classification {
		return t.Classes
	}
	return 1
}

// Particle is one network of an ensemble: its parameters and running
// statistics as flat vectors. Particles hold no graphs: a machine (one per
// worker) copies a particle's vectors into its graphs for each run.
type Particle struct {
	// Trunk is α, the trunk's parameters as one flat vector.
	Trunk []float64
	// Heads[j] is βʲ, task j's head parameters as one flat vector.
	Heads [][]float64
	// Stats are the running statistics of the trunk's batch
	// normalisation (models.Model.TrunkStats), empty without any.
	Stats []float64
}

// NewParticle draws a particle's parameters from rng by the model's
// initialisation.
func NewParticle(cfg *Config, rng *rand.Rand) (*Particle, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m := cfg.Model
	p := &Particle{}
	trunkParams := m.TrunkParams()
	p.Trunk = make([]float64, models.Size(trunkParams))
	models.Init(trunkParams, rng, p.Trunk)
	for j := range cfg.Tasks {
		hp := m.HeadParams(j)
		h := make([]float64, models.Size(hp))
		models.Init(hp, rng, h)
		p.Heads = append(p.Heads, h)
	}
	stats := m.TrunkStats()
	p.Stats = make([]float64, models.Size(stats))
	models.Init(stats, rng, p.Stats)
	return p, nil
}

func newTensors(ps []models.Param, dt tensor.Dtype) []*tensor.Dense {
	vals := make([]*tensor.Dense, len(ps))
	for i, p := range ps {
		vals[i] = tensor.New(tensor.WithShape(p.Shape...), tensor.Of(dt))
	}
	return vals
}

// scatter copies the flat vector src into the tensors dst, in order.
func scatter(src []float64, dst []*tensor.Dense) {
	for _, t := range dst {
		n := t.Shape().TotalSize()
		setFloats(t, src[:n])
		src = src[n:]
	}
}

// setFloats copies src into t, converting to t's dtype.
func setFloats(t *tensor.Dense, src []float64) {
	switch d := t.Data().(type) {
	case []float64:
		copy(d, src)
	case []float32:
		for i, v := range src {
			d[i] = float32(v)
		}
	default:
		panic(fmt.Sprintf("engine: tensor of %T", d))
	}
}

// getFloats copies v's values into dst, converting to float64.
func getFloats(v gorgonia.Value, dst []float64) error {
	switch d := v.Data().(type) {
	case []float64:
		if len(d) != len(dst) {
			return fmt.Errorf("engine: %d values for %d", len(d), len(dst))
		}
		copy(dst, d)
	case []float32:
		if len(d) != len(dst) {
			return fmt.Errorf("engine: %d values for %d", len(d), len(dst))
		}
		for i, x := range d {
			dst[i] = float64(x)
		}
	case float64:
		dst[0] = d
	case float32:
		dst[0] = float64(d)
	default:
		return fmt.Errorf("engine: value of %T", d)
	}
	return nil
}

// paramNodes adds one input node per parameter to g, bound to vals.
func paramNodes(g *gorgonia.ExprGraph, ps []models.Param, vals []*tensor.Dense) []*gorgonia.Node {
	nodes := make([]*gorgonia.Node, len(ps))
	for i, p := range ps {
		nodes[i] = gorgonia.NewTensor(g, vals[i].Dtype(), len(p.Shape),
			gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name), gorgonia.WithValue(vals[i]))
	}
	return nodes
}
