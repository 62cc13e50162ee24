// Package lenet is the multi-task LeNet of the paper's Multi-MNIST
// experiments (and of Sener & Koltun, 2018), for 1×36×36 inputs:
//
//	trunk: conv 1→10 (9×9) → ReLU → max-pool 2 → conv 10→20 (5×5) → ReLU →
//	       max-pool 2 → flatten (500) → linear 500→50 → ReLU
//	head j: linear 50→C_j
//
// Convolutions have stride 1 and no padding, so 36 → 28 → 14 → 10 → 5.
// Every weight and bias starts as PyTorch's defaults for nn.Conv2d and
// nn.Linear: U(−1/√fan_in, 1/√fan_in), with fan_in = in_channels·k·k for a
// convolution and in_features for a linear layer. Linear weights are stored
// as (in, out), the transpose of PyTorch's layout, so that the layer is
// one matrix product.
package lenet

import (
	"fmt"
	"math"
	"slices"

	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// Side is the input images' height and width; the trunk's 500 flattened
// features need exactly this size.
const Side = 36

// Features is the width of the trunk's output.
const Features = 50

// LeNet is the architecture with one head per task.
type LeNet struct {
	classes []int
}

// New returns a LeNet with one head per task, task j having classes[j]
// outputs.
func New(classes ...int) *LeNet {
	for _, c := range classes {
		if c < 1 {
			panic(fmt.Sprintf("lenet: a head with %d outputs", c))
		}
	}
	return &LeNet{classes: slices.Clone(classes)}
}

func (*LeNet) InputShape() []int { return []int{1, Side, Side} }

func param(name string, fanIn int, shape ...int) models.Param {
	return models.Param{Name: name, Shape: shape, Init: models.Uniform(1 / math.Sqrt(float64(fanIn)))}
}

func (*LeNet) TrunkParams() []models.Param {
	return []models.Param{
		param("conv1.weight", 1*9*9, 10, 1, 9, 9),
		param("conv1.bias", 1*9*9, 1, 10, 1, 1),
		param("conv2.weight", 10*5*5, 20, 10, 5, 5),
		param("conv2.bias", 10*5*5, 1, 20, 1, 1),
		param("fc.weight", 500, 500, Features),
		param("fc.bias", 500, Features),
	}
}

// TrunkStats is empty: LeNet has no batch normalisation.
func (*LeNet) TrunkStats() []models.Param { return nil }

func (l *LeNet) HeadParams(task int) []models.Param {
	return []models.Param{
		param(fmt.Sprintf("head%d.weight", task), Features, Features, l.classes[task]),
		param(fmt.Sprintf("head%d.bias", task), Features, l.classes[task]),
	}
}

func (l *LeNet) Trunk(x *gorgonia.Node, p []*gorgonia.Node, _ *models.Norm) (*gorgonia.Node, error) {
	if s := x.Shape(); len(s) != 4 || s[1] != 1 || s[2] != Side || s[3] != Side {
		return nil, fmt.Errorf("lenet: input of shape %v, want (batch, 1, %d, %d)", s, Side, Side)
	}
	h, err := convReLUPool(x, p[0], p[1])
	if err != nil {
		return nil, fmt.Errorf("lenet conv1: %w", err)
	}
	if h, err = convReLUPool(h, p[2], p[3]); err != nil {
		return nil, fmt.Errorf("lenet conv2: %w", err)
	}
	// The linear layer flattens its (batch, 20, 5, 5) input.
	if h, err = ops.Linear(h, p[4], p[5], true); err != nil {
		return nil, fmt.Errorf("lenet fc: %w", err)
	}
	return h, nil
}

func (l *LeNet) Head(features *gorgonia.Node, task int, p []*gorgonia.Node) (*gorgonia.Node, error) {
	out, err := models.Linear(features, p[0], p[1])
	if err != nil {
		return nil, fmt.Errorf("lenet head %d: %w", task, err)
	}
	return out, nil
}

// convReLUPool is conv (stride 1, no padding) + bias → ReLU → 2×2 max-pool.
func convReLUPool(x, w, b *gorgonia.Node) (*gorgonia.Node, error) {
	h, err := ops.Conv2d(x, w, b, 1, 0)
	if err != nil {
		return nil, err
	}
	return ops.ReLUMaxPool2d(h, 2, 2, 0)
}
