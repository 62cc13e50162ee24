package engine

import (
	"errors"

	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// Footprint is about the bytes one worker's graphs hold while they run
// batches of a given size: Fixed, plus PerExample for every example of
// the batch. It counts the values of the graphs' nodes, forward and
// backward, in the graphs' dtype; the ops' own scratch (a convolution's
// patches) comes on top, about as much again for LeNet where its
// convolutions make patches. Where they read their inputs instead
// (float32 with AVX-512, models/ops), the heap falls a little short of
// the count (0.90 of it: some nodes' values are not held apart).
type Footprint struct {
	Fixed, PerExample float64
}

// Bytes is the footprint at batch size batch.
func (f Footprint) Bytes(batch int) float64 { return f.Fixed + float64(batch)*f.PerExample }

// GraphFootprint measures the graphs of cfg without running them: it builds
// one worker's graphs at batches of 1 and 2 examples (whatever cfg.Batch
// is) and sums their nodes' sizes, so that what grows with the batch is
// known before a batch of cfg.Batch examples is allocated.
func GraphFootprint(cfg *Config) (Footprint, error) {
	sizes, err := atBatchesOf1And2(cfg, func(m *machine) (float64, error) {
		if err := m.trainingGraphs(); err != nil {
			return 0, err
		}
		size := 0.0
		for _, g := range m.graphs() {
			for _, n := range g.AllNodes() {
				size += float64(n.Shape().TotalSize())
			}
		}
		return size, nil
	})
	if err != nil {
		return Footprint{}, err
	}
	size := float64(cfg.Dtype.Size())
	return Footprint{Fixed: (2*sizes[0] - sizes[1]) * size, PerExample: (sizes[1] - sizes[0]) * size}, nil
}

// atBatchesOf1And2 returns what measure says of a machine for cfg at
// batches of 1 and of 2 examples, whatever cfg.Batch is.
func atBatchesOf1And2(cfg *Config, measure func(*machine) (float64, error)) ([2]float64, error) {
	var sizes [2]float64
	for i := range sizes {
		c := *cfg
		c.Batch = i + 1
		m, err := newMachine(&c)
		if err != nil {
			return sizes, err
		}
		// The machine is thrown away: on a device its buffers are freed.
		sizes[i], err = measure(m)
		if err = errors.Join(err, m.closeDevices()); err != nil {
			return sizes, err
		}
	}
	return sizes, nil
}

// graphs lists the machine's graphs.
func (m *machine) graphs() []*gorgonia.ExprGraph {
	var gs []*gorgonia.ExprGraph
	for _, s := range m.steps {
		gs = append(gs, s.g)
	}
	if m.trunk != nil {
		gs = append(gs, m.trunk.g)
	}
	return append(gs, m.prediction.g)
}

// KeptBytes is the memory a heads-first step keeps for each particle
// between its two evaluations (keepTrunks) at batch size cfg.Batch: the
// trunk's activations, patches and argmaxes; 0 where the trunk's passes
// are not kept. Like GraphFootprint it builds graphs of 1 and 2 examples
// only.
func KeptBytes(cfg *Config) (float64, error) {
	if len(cfg.Tasks) < 2 || cfg.Device != nil {
		return 0, nil
	}
	sizes, err := atBatchesOf1And2(cfg, func(m *machine) (float64, error) {
		if ok, err := m.keepingGraphs(); err != nil || !ok {
			return 0, err
		}
		n, err := m.headSteps.trunkOps.SavedPassBytes(int(cfg.Dtype.Size()))
		return float64(n), err
	})
	if err != nil {
		return 0, err
	}
	return sizes[0] + float64(cfg.Batch-1)*(sizes[1]-sizes[0]), nil
}

// AcrossBytes is the memory one worker holds for stacking the passes of
// the particles it runs on a batch (ops.StackAcross, machine.
// gradientsKept) at batch size cfg.Batch, when particles particles share
// workers workers: the filters, forward products and output gradients
// of its largest group of particles (acrossMax); 0 where nothing is
// stacked (one task, a device, a trunk whose passes do not replay, or no
// convolution on the images). A step whose heads go first (headsFirst)
// stacks the forward products of its heads-only evaluation and the
// output gradients of the next one's K passes and, with the kernels over
// outputs, the repulsion's: K + 1 are counted. Like GraphFootprint it
// builds graphs of 1 and 2 examples only.
func AcrossBytes(cfg *Config, particles, workers int, headsFirst bool) (float64, error) {
	if len(cfg.Tasks) < 2 || cfg.Device != nil || particles < 1 {
		return 0, nil
	}
	workers = min(max(1, workers), particles)
	group := min(acrossMax, (particles+workers-1)/workers)
	sizes, err := atBatchesOf1And2(cfg, func(m *machine) (float64, error) {
		if err := m.trainingGraphs(); err != nil {
			return 0, err
		}
		if m.trunk == nil || !m.trunk.replayed {
			return 0, nil
		}
		passes := len(cfg.Tasks)
		if headsFirst {
			passes++
		}
		bytes := 0
		for _, c := range m.acrossConvs() {
			bytes += ops.AcrossBytes(c.node, group, passes, int(cfg.Dtype.Size()))
		}
		return float64(bytes), nil
	})
	if err != nil {
		return 0, err
	}
	return sizes[0] + float64(cfg.Batch-1)*(sizes[1]-sizes[0]), nil
}

// StepMultiplyAdds is the arithmetic of the matrix products of one
// training step of the default kind (every task's gradient through the
// trunk, kernels over the parameters) of particles particles at batch
// size cfg.Batch, in multiply-adds: per particle the trunk's and every
// head's forward pass, and per task a backward pass through the trunk
// and that task's head (ops.CountProducts). Divided by the machine's
// rate for large products it is the step's floor (docs/performance.md).
func StepMultiplyAdds(cfg *Config, particles int) (float64, error) {
	g := gorgonia.NewGraph()
	x, weight := inputNode(g, cfg), weightNode(g, cfg)
	_, trunk, heads, err := newValues(g, cfg, true, nil)
	if err != nil {
		return 0, err
	}
	features, err := cfg.Model.Trunk(x, trunk, &models.Norm{Weight: weight})
	if err != nil {
		return 0, err
	}
	t := ops.CountProducts(g)
	perParticle := t.Forward + float64(len(cfg.Tasks))*t.Backward
	for j := range cfg.Tasks {
		before := ops.CountProducts(g)
		if _, err := cfg.Model.Head(features, j, heads[j]); err != nil {
			return 0, err
		}
		after := ops.CountProducts(g)
		perParticle += (after.Forward - before.Forward) + (after.Backward - before.Backward)
	}
	return float64(particles) * perParticle, nil
}
