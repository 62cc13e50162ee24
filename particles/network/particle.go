// Package network runs ensembles of network particles on Gorgonia: each
// particle is a multi-task network (package models) whose trunk and heads
// package particles' rules move as flat vectors.
//
// A particle keeps its parameters as float64 vectors, the trunk α and one
// head βʲ per task, and builds its Gorgonia graphs once: one graph per task,
// computing the trunk, that task's head and loss, and the loss's gradient
// with respect to the trunk and that head; and one forward-only graph with
// all heads for prediction. The task graphs share the particle's trunk
// tensors.
//
// Batch normalisation: the task graphs normalise with the batch's
// statistics (training mode) and the prediction graph with the particle's
// running statistics (evaluation mode). Every task graph sees the same
// parameters and batch, so task 0's batch statistics update the running
// ones once per step, as PyTorch's forward pass in training mode does.
//
// Why one graph per task: MT-SGD needs each task's trunk gradient
// separately. Gorgonia's symbolic differentiation keeps one derivative per
// node, so a second Grad in the same graph returns the first loss's
// gradient for every node the two losses share (see
// ../shared/notes/gorgonia.md). One graph per task is correct at the price
// of one trunk forward pass per task; the tests check each gradient
// against finite differences and their sum against the summed loss.
package network

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
		return fmt.Errorf("network: no model")
	case len(c.Tasks) == 0:
		return fmt.Errorf("network: no tasks")
	case c.Batch < 1:
		return fmt.Errorf("network: batch size %d", c.Batch)
	case c.Dtype != tensor.Float32 && c.Dtype != tensor.Float64:
		return fmt.Errorf("network: dtype %v, want float32 or float64", c.Dtype)
	}
	for j, t := range c.Tasks {
		if t.Kind == data.Classification && t.Classes < 2 {
			return fmt.Errorf("network: task %s has %d classes", t.Name, t.Classes)
		}
		if t.Kind != data.Classification && t.Kind != data.Regression {
			return fmt.Errorf("network: task %d has kind %v", j, t.Kind)
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

// Particle is one network of an ensemble.
type Particle struct {
	// Trunk is α, the trunk's parameters as one flat vector.
	Trunk []float64
	// Heads[j] is βʲ, task j's head parameters as one flat vector.
	Heads [][]float64
	// Stats are the running statistics of the trunk's batch
	// normalisation (models.Model.TrunkStats), empty without any.
	Stats []float64

	cfg        *Config
	batchStats []float64 // the last training batch's, from task 0's graph
	values     []*values // every graph's copy of the parameters
	taskGraphs []*taskGraph
	predict    *predictGraph
}

// values is one graph's copy of a particle's parameters in the graph's
// dtype. Each graph has its own: Gorgonia transposes a weight tensor in
// place while it differentiates a matrix product, so graphs that run at
// the same time must not share parameter tensors.
type values struct {
	trunk []*tensor.Dense
	heads [][]*tensor.Dense // nil for the heads the graph does not use
	stats []*tensor.Dense   // running statistics, in the prediction graph
}

// newValues allocates a copy of the trunk and of the listed heads, filled
// from the flat vectors and kept up to date by Sync.
func (p *Particle) newValues(heads ...int) *values {
	m := p.cfg.Model
	v := &values{trunk: newTensors(m.TrunkParams(), p.cfg.Dtype), heads: make([][]*tensor.Dense, len(p.Heads))}
	for _, j := range heads {
		v.heads[j] = newTensors(m.HeadParams(j), p.cfg.Dtype)
	}
	p.values = append(p.values, v)
	v.sync(p)
	return v
}

func (v *values) sync(p *Particle) {
	scatter(p.Trunk, v.trunk)
	scatter(p.Stats, v.stats)
	for j, h := range v.heads {
		if h != nil {
			scatter(p.Heads[j], h)
		}
	}
}

// NewParticle builds a particle with parameters drawn from rng by the
// model's initialisation, and its graphs.
func NewParticle(cfg *Config, rng *rand.Rand) (*Particle, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m := cfg.Model
	p := &Particle{cfg: cfg}
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
	p.batchStats = make([]float64, len(p.Stats))
	for j := range cfg.Tasks {
		tg, err := newTaskGraph(p, j)
		if err != nil {
			return nil, err
		}
		p.taskGraphs = append(p.taskGraphs, tg)
	}
	pg, err := newPredictGraph(p)
	if err != nil {
		return nil, err
	}
	p.predict = pg
	return p, nil
}

func newTensors(ps []models.Param, dt tensor.Dtype) []*tensor.Dense {
	vals := make([]*tensor.Dense, len(ps))
	for i, p := range ps {
		vals[i] = tensor.New(tensor.WithShape(p.Shape...), tensor.Of(dt))
	}
	return vals
}

// Sync copies the flat vectors into the graphs' parameter tensors. Call it
// after changing Trunk, Heads or Stats.
func (p *Particle) Sync() {
	for _, v := range p.values {
		v.sync(p)
	}
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
		panic(fmt.Sprintf("network: tensor of %T", d))
	}
}

// getFloats copies v's values into dst, converting to float64.
func getFloats(v gorgonia.Value, dst []float64) error {
	switch d := v.Data().(type) {
	case []float64:
		if len(d) != len(dst) {
			return fmt.Errorf("network: %d values for %d", len(d), len(dst))
		}
		copy(dst, d)
	case []float32:
		if len(d) != len(dst) {
			return fmt.Errorf("network: %d values for %d", len(d), len(dst))
		}
		for i, x := range d {
			dst[i] = float64(x)
		}
	case float64:
		dst[0] = d
	case float32:
		dst[0] = float64(d)
	default:
		return fmt.Errorf("network: value of %T", d)
	}
	return nil
}

// UpdateStats moves the running statistics towards those of the last
// batch Gradients saw for task 0, which had n real examples, and syncs
// them into the prediction graph.
func (p *Particle) UpdateStats(n int) error {
	if len(p.Stats) == 0 {
		return nil
	}
	spatial := p.taskGraphs[0].spatial
	counts := make([]int, len(spatial))
	for l, hw := range spatial {
		counts[l] = n * hw
	}
	if err := models.UpdateRunning(p.Stats, p.batchStats, p.cfg.Model.TrunkStats(), counts, models.BatchNormMomentum); err != nil {
		return err
	}
	scatter(p.Stats, p.predict.stats)
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
