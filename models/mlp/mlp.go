// Package mlp is the multi-task multilayer perceptron of the paper's SARCOS
// experiment: a trunk of fully connected layers with ReLU (21→256→256→256
// in the paper) and one linear head per task (256→1 for a regression task,
// 256→C for a classification task).
//
// Every weight and bias starts as PyTorch's nn.Linear does:
// U(−1/√fan_in, 1/√fan_in). Weights are stored (in, out), the transpose of
// PyTorch's layout, so that a layer is one matrix product.
package mlp

import (
	"fmt"
	"math"
	"slices"

	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// MLP is the architecture.
type MLP struct {
	inputs  int
	hidden  []int
	outputs []int
}

// New returns an MLP for inputs features with the given hidden layer
// widths and one head per task, head j having outputs[j] outputs.
func New(inputs int, hidden []int, outputs ...int) *MLP {
	if inputs < 1 || len(hidden) == 0 || slices.Min(hidden) < 1 || len(outputs) == 0 || slices.Min(outputs) < 1 {
		panic(fmt.Sprintf("mlp: inputs %d, hidden %v, outputs %v", inputs, hidden, outputs))
	}
	return &MLP{inputs: inputs, hidden: slices.Clone(hidden), outputs: slices.Clone(outputs)}
}

func (m *MLP) InputShape() []int { return []int{m.inputs} }

func linearParams(name string, in, out int) []models.Param {
	bound := 1 / math.Sqrt(float64(in))
	return []models.Param{
		{Name: name + ".weight", Shape: []int{in, out}, Init: models.Uniform(bound)},
		{Name: name + ".bias", Shape: []int{out}, Init: models.Uniform(bound)},
	}
}

func (m *MLP) TrunkParams() []models.Param {
	var ps []models.Param
	in := m.inputs
	for i, h := range m.hidden {
		ps = append(ps, linearParams(fmt.Sprintf("fc%d", i+1), in, h)...)
		in = h
	}
	return ps
}

// TrunkStats is empty: the MLP has no batch normalisation.
func (*MLP) TrunkStats() []models.Param { return nil }

func (m *MLP) HeadParams(task int) []models.Param {
	return linearParams(fmt.Sprintf("head%d", task), m.hidden[len(m.hidden)-1], m.outputs[task])
}

func (m *MLP) Trunk(x *gorgonia.Node, p []*gorgonia.Node, _ *models.Norm) (*gorgonia.Node, error) {
	if s := x.Shape(); len(s) != 2 || s[1] != m.inputs {
		return nil, fmt.Errorf("mlp: input of shape %v, want (batch, %d)", s, m.inputs)
	}
	h := x
	for i := range m.hidden {
		var err error
		if h, err = ops.Linear(h, p[2*i], p[2*i+1], true); err != nil {
			return nil, fmt.Errorf("mlp fc%d: %w", i+1, err)
		}
	}
	return h, nil
}

func (m *MLP) Head(features *gorgonia.Node, task int, p []*gorgonia.Node) (*gorgonia.Node, error) {
	out, err := models.Linear(features, p[0], p[1])
	if err != nil {
		return nil, fmt.Errorf("mlp head %d: %w", task, err)
	}
	return out, nil
}
