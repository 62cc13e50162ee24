package engine

import (
	"gorgonia.org/gorgonia"
)

// Footprint is a lower bound on the bytes one worker's graphs hold while
// they run batches of a given size: Fixed, plus PerExample for every
// example of the batch. It counts the values of the graphs' nodes, forward
// and backward, in the graphs' dtype; the ops' own scratch (a
// convolution's patches) comes on top, about as much again for LeNet.
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
	var sizes [2]float64
	for i := range sizes {
		c := *cfg
		c.Batch = i + 1
		m, err := newMachine(&c)
		if err != nil {
			return Footprint{}, err
		}
		if err := m.trainingGraphs(); err != nil {
			return Footprint{}, err
		}
		for _, g := range m.graphs() {
			for _, n := range g.AllNodes() {
				sizes[i] += float64(n.Shape().TotalSize())
			}
		}
	}
	size := float64(cfg.Dtype.Size())
	return Footprint{Fixed: (2*sizes[0] - sizes[1]) * size, PerExample: (sizes[1] - sizes[0]) * size}, nil
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
