// Package models says what a multi-task network is to the rest of the
// project: a trunk α shared by the tasks and one head βʲ per task, each a
// list of parameters that the particle rules see as one flat vector. Each
// architecture lives in its own package and is read as name.New
// (models/lenet, models/resnet18, models/mlp). A model builds its
// computation into a Gorgonia graph from parameter nodes it is given, so
// that the caller decides how parameters are stored, shared between graphs
// and updated.
package models

import (
	"math/rand/v2"

	"gorgonia.org/gorgonia"
)

// Param describes one parameter tensor.
type Param struct {
	Name  string
	Shape []int
	// Init fills a fresh parameter's values.
	Init func(rng *rand.Rand, dst []float64)
}

// Size is the number of values in p.
func (p Param) Size() int {
	n := 1
	for _, s := range p.Shape {
		n *= s
	}
	return n
}

// Size is the number of values in ps, the length of their flat vector.
func Size(ps []Param) int {
	n := 0
	for _, p := range ps {
		n += p.Size()
	}
	return n
}

// Init fills dst, the flat vector of ps, with fresh values.
func Init(ps []Param, rng *rand.Rand, dst []float64) {
	for _, p := range ps {
		p.Init(rng, dst[:p.Size()])
		dst = dst[p.Size():]
	}
}

// Uniform draws values from U(−bound, bound). With bound = 1/√fan_in it
// is PyTorch's default initialisation of the weights (kaiming_uniform_
// with a = √5) and biases of nn.Linear and nn.Conv2d.
func Uniform(bound float64) func(*rand.Rand, []float64) {
	return func(rng *rand.Rand, dst []float64) {
		for i := range dst {
			dst[i] = bound * (2*rng.Float64() - 1)
		}
	}
}

// Model is a multi-task architecture.
type Model interface {
	// InputShape is the shape of one input, channels first.
	InputShape() []int
	// TrunkParams lists the trunk's parameters, in flat-vector order.
	TrunkParams() []Param
	// HeadParams lists task's head parameters, in flat-vector order.
	HeadParams(task int) []Param
	// TrunkStats lists the running statistics of the trunk's batch
	// normalisation layers (see Norm), or nothing.
	TrunkStats() []Param
	// Trunk adds the trunk applied to the batch x (batch × InputShape) to
	// x's graph, with parameter nodes in TrunkParams order and batch
	// normalisation as norm says, and returns the features (batch ×
	// features).
	Trunk(x *gorgonia.Node, params []*gorgonia.Node, norm *Norm) (*gorgonia.Node, error)
	// Head adds task's head applied to features, with parameter nodes in
	// HeadParams order, and returns its outputs (batch × outputs): logits
	// for a classification task, predictions for a regression task.
	Head(features *gorgonia.Node, task int, params []*gorgonia.Node) (*gorgonia.Node, error)
}
