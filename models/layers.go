package models

import "gorgonia.org/gorgonia"

// Linear adds x·W + b to x's graph, for W stored (in, out) and b
// broadcast over the batch (the rows of x).
func Linear(x, w, b *gorgonia.Node) (*gorgonia.Node, error) {
	h, err := gorgonia.Mul(x, w)
	if err != nil {
		return nil, err
	}
	return gorgonia.BroadcastAdd(h, b, nil, []byte{0})
}
