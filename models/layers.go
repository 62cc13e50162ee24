package models

import (
	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/models/ops"
)

// Linear adds x·W + b to x's graph, for W stored (in, out) and b
// broadcast over the batch (the rows of x): ops.Linear without ReLU.
func Linear(x, w, b *gorgonia.Node) (*gorgonia.Node, error) {
	return ops.Linear(x, w, b, false)
}
