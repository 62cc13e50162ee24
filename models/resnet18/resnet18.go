// Package resnet18 is the multi-task ResNet-18 of the paper's CelebA
// experiment in two layouts, one trunk shared by the tasks and one linear
// head per task. Both have the same four layers of basic blocks:
//
//	layer k: two basic blocks with 64, 128, 256, 512 channels; the first
//	       block of layers 2-4 has stride 2 and a 1×1/2 convolution + BN
//	       on its shortcut
//	basic block: conv 3×3 → BN → ReLU → conv 3×3 → BN, + shortcut → ReLU
//
// Paper is the network the paper ran (its CelebA appendix: "as in" Sener
// & Koltun, whose multi_faces_resnet.py is the CIFAR-style ResNet-18):
//
//	trunk: conv 3×3/1 (3→64, padding 1) → BN → ReLU → layer1 … layer4
//	       → 4×4 average pool, flattened (2×2×512 = 2,048 at 64×64)
//	head j: linear 2048→C_j
//
// A 64×64 input keeps its size through layer1, then 32×32, 16×16 and
// 8×8 in layers 2-4. Its initialisation is PyTorch's default, as that
// code leaves it: convolution and linear weights kaiming_uniform_ with
// a = √5, which is U(±1/√fan_in) with fan_in = in_channels·k·k, head
// biases U(±1/√fan_in), batch-norm scale 1 and shift 0, running mean 0
// and variance 1.
//
// New is torchvision's resnet18 without its final layer:
//
//	trunk: conv 7×7/2 (3→64, padding 3) → BN → ReLU → max-pool 3×3/2
//	       (padding 1) → layer1 … layer4 → global average pool (512)
//	head j: linear 512→C_j
//
// A 64×64 input becomes 32×32 after the first convolution, 16×16 after
// pooling and 2×2 after layer4: about 15 times fewer operations than
// Paper's. Its initialisation is torchvision's: convolution weights
// N(0, 2/fan_out) with fan_out = out_channels·k·k (kaiming_normal_,
// mode "fan_out"), batch norms as above, heads as PyTorch's nn.Linear,
// U(±1/√512).
//
// Convolutions have no bias in either. Small and PaperSmall build the
// same networks with fewer channels and smaller inputs, for tests: every
// layer is the same code at another width.
package resnet18

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gorgonia.org/gorgonia"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// Side is the height and width of the inputs New expects: CelebA's
// images resized to 64×64.
const Side = 64

// ResNet is the architecture with one head per task.
type ResNet struct {
	width, side int
	classes     []int
	paper       bool // Paper's layout; torchvision's otherwise
}

// New returns the standard ResNet-18 trunk for 3×64×64 inputs with one
// head per task, task j having classes[j] outputs.
func New(classes ...int) *ResNet { return Small(64, Side, classes...) }

// Small returns ResNet-18 with width channels in layer1 (64 in the
// standard network; layers 2-4 have 2, 4 and 8 times as many) for
// 3×side×side inputs.
func Small(width, side int, classes ...int) *ResNet {
	if width < 1 || side < 1 || len(classes) == 0 || slices.Min(classes) < 1 {
		panic(fmt.Sprintf("resnet18: width %d, side %d, classes %v", width, side, classes))
	}
	return &ResNet{width: width, side: side, classes: slices.Clone(classes)}
}

// PoolSide is the side of the average pool that ends Paper's trunk.
const PoolSide = 4

// Paper returns the paper's trunk, the CIFAR-style ResNet-18, for
// 3×64×64 inputs with one head per task, task j having classes[j]
// outputs.
func Paper(classes ...int) *ResNet { return PaperSmall(64, Side, classes...) }

// PaperSmall returns Paper's layout with width channels in layer1 (64 in
// the paper's network) for 3×side×side inputs, side a multiple of 32
// (layers 2-4 halve it three times, then the pool takes 4×4 windows).
func PaperSmall(width, side int, classes ...int) *ResNet {
	if side%(8*PoolSide) != 0 {
		panic(fmt.Sprintf("resnet18: side %d is not a multiple of %d", side, 8*PoolSide))
	}
	r := Small(width, side, classes...)
	r.paper = true
	return r
}

func (r *ResNet) InputShape() []int { return []int{3, r.side, r.side} }

// Features is the width of the trunk's output: 512 in torchvision's
// layout, 512 per window of the last pool in Paper's (2,048 at 64×64).
func (r *ResNet) Features() int {
	if r.paper {
		windows := r.side / (8 * PoolSide)
		return 8 * r.width * windows * windows
	}
	return 8 * r.width
}

// block describes one basic block.
type block struct {
	name        string
	in, out     int
	stride      int
	hasShortcut bool // a 1×1 convolution + BN on the shortcut
}

func (r *ResNet) blocks() []block {
	var bs []block
	in := r.width
	for l := range 4 {
		out := r.width << l
		for b := range 2 {
			stride := 1
			if l > 0 && b == 0 {
				stride = 2
			}
			bs = append(bs, block{
				name: fmt.Sprintf("layer%d.%d", l+1, b), in: in, out: out, stride: stride,
				hasShortcut: stride != 1 || in != out,
			})
			in = out
		}
	}
	return bs
}

// conv is a convolution weight, initialised as the layout's reference
// does: PyTorch's default for Paper, torchvision's otherwise.
func (r *ResNet) conv(name string, in, out, k int) models.Param {
	if r.paper {
		return models.Param{Name: name, Shape: []int{out, in, k, k}, Init: models.Uniform(1 / math.Sqrt(float64(in*k*k)))}
	}
	std := math.Sqrt(2 / float64(out*k*k))
	return models.Param{Name: name, Shape: []int{out, in, k, k}, Init: func(rng *rand.Rand, dst []float64) {
		for i := range dst {
			dst[i] = std * rng.NormFloat64()
		}
	}}
}

func bn(name string, c int) []models.Param {
	return []models.Param{
		{Name: name + ".weight", Shape: []int{1, c, 1, 1}, Init: models.Constant(1)},
		{Name: name + ".bias", Shape: []int{1, c, 1, 1}, Init: models.Constant(0)},
	}
}

// stem is the side of the first convolution's kernel.
func (r *ResNet) stem() int {
	if r.paper {
		return 3
	}
	return 7
}

// TrunkParams are, in order: conv1, bn1, then per block conv1, bn1,
// conv2, bn2 and the shortcut's conv and bn; a convolution is one weight
// (out, in, k, k), a batch norm its weight and bias (1, C, 1, 1).
func (r *ResNet) TrunkParams() []models.Param {
	ps := append([]models.Param{r.conv("conv1.weight", 3, r.width, r.stem())}, bn("bn1", r.width)...)
	for _, b := range r.blocks() {
		ps = append(ps, r.conv(b.name+".conv1.weight", b.in, b.out, 3))
		ps = append(ps, bn(b.name+".bn1", b.out)...)
		ps = append(ps, r.conv(b.name+".conv2.weight", b.out, b.out, 3))
		ps = append(ps, bn(b.name+".bn2", b.out)...)
		if b.hasShortcut {
			ps = append(ps, r.conv(b.name+".downsample.0.weight", b.in, b.out, 1))
			ps = append(ps, bn(b.name+".downsample.1", b.out)...)
		}
	}
	return ps
}

// TrunkStats are the running statistics of the batch norms, in the order
// of TrunkParams.
func (r *ResNet) TrunkStats() []models.Param {
	ps := models.StatParams("bn1", r.width)
	for _, b := range r.blocks() {
		ps = append(ps, models.StatParams(b.name+".bn1", b.out)...)
		ps = append(ps, models.StatParams(b.name+".bn2", b.out)...)
		if b.hasShortcut {
			ps = append(ps, models.StatParams(b.name+".downsample.1", b.out)...)
		}
	}
	return ps
}

func (r *ResNet) HeadParams(task int) []models.Param {
	bound := 1 / math.Sqrt(float64(r.Features()))
	return []models.Param{
		{Name: fmt.Sprintf("head%d.weight", task), Shape: []int{r.Features(), r.classes[task]}, Init: models.Uniform(bound)},
		{Name: fmt.Sprintf("head%d.bias", task), Shape: []int{r.classes[task]}, Init: models.Uniform(bound)},
	}
}

// params hands out parameter nodes in TrunkParams order.
type params []*gorgonia.Node

func (p *params) next(n int) []*gorgonia.Node {
	out := (*p)[:n]
	*p = (*p)[n:]
	return out
}

func (r *ResNet) Trunk(x *gorgonia.Node, p []*gorgonia.Node, norm *models.Norm) (*gorgonia.Node, error) {
	if s := x.Shape(); len(s) != 4 || s[1] != 3 || s[2] != r.side || s[3] != r.side {
		return nil, fmt.Errorf("resnet18: input of shape %v, want (batch, 3, %d, %d)", s, r.side, r.side)
	}
	if len(p) != len(r.TrunkParams()) {
		return nil, fmt.Errorf("resnet18: %d parameter nodes for %d", len(p), len(r.TrunkParams()))
	}
	ps := params(p)
	h, err := r.stemLayers(x, ps.next(3), norm)
	if err != nil {
		return nil, err
	}
	for _, b := range r.blocks() {
		if h, err = basicBlock(h, b, &ps, norm); err != nil {
			return nil, fmt.Errorf("resnet18 %s: %w", b.name, err)
		}
	}
	if r.paper {
		return ops.AvgPool(h, PoolSide)
	}
	return ops.GlobalAvgPool(h)
}

// stemLayers are the layers before layer1: the first convolution, its
// batch norm and ReLU, and in torchvision's layout the max-pool.
func (r *ResNet) stemLayers(x *gorgonia.Node, p []*gorgonia.Node, norm *models.Norm) (*gorgonia.Node, error) {
	if r.paper {
		h, err := convBN(x, p, 3, 1, 1, norm)
		if err != nil {
			return nil, fmt.Errorf("resnet18 conv1: %w", err)
		}
		return ops.ReLU(h)
	}
	h, err := convBN(x, p, 7, 2, 3, norm)
	if err != nil {
		return nil, fmt.Errorf("resnet18 conv1: %w", err)
	}
	if h, err = ops.ReLUMaxPool2d(h, 3, 2, 1); err != nil {
		return nil, fmt.Errorf("resnet18 max-pool: %w", err)
	}
	return h, nil
}

func basicBlock(x *gorgonia.Node, b block, ps *params, norm *models.Norm) (*gorgonia.Node, error) {
	h, err := convBN(x, ps.next(3), 3, b.stride, 1, norm)
	if err != nil {
		return nil, err
	}
	if h, err = ops.ReLU(h); err != nil {
		return nil, err
	}
	if h, err = convBN(h, ps.next(3), 3, 1, 1, norm); err != nil {
		return nil, err
	}
	shortcut := x
	if b.hasShortcut {
		if shortcut, err = convBN(x, ps.next(3), 1, b.stride, 0, norm); err != nil {
			return nil, fmt.Errorf("shortcut: %w", err)
		}
	}
	return ops.AddReLU(h, shortcut)
}

// convBN is a k×k convolution without bias followed by batch
// normalisation; p is the weight, the BN scale and the BN shift.
func convBN(x *gorgonia.Node, p []*gorgonia.Node, k, stride, pad int, norm *models.Norm) (*gorgonia.Node, error) {
	h, err := ops.Conv2d(x, p[0], nil, stride, pad)
	if err != nil {
		return nil, err
	}
	return models.BatchNorm(h, p[1], p[2], norm)
}

func (r *ResNet) Head(features *gorgonia.Node, task int, p []*gorgonia.Node) (*gorgonia.Node, error) {
	out, err := models.Linear(features, p[0], p[1])
	if err != nil {
		return nil, fmt.Errorf("resnet18 head %d: %w", task, err)
	}
	return out, nil
}
