package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type linearCase struct {
	x       []int // input shape, flattened to (x[0], in)
	out     int
	relu    bool
	biasDim int // 1: (out); 2: (1, out)
}

var linearCases = []linearCase{
	{x: []int{4, 6}, out: 3, biasDim: 1},
	{x: []int{5, 2, 2, 3}, out: 4, relu: true, biasDim: 1}, // LeNet's fc on pooled maps
	{x: []int{3, 7}, out: 2, relu: true, biasDim: 2},
}

func (c linearCase) String() string { return fmt.Sprintf("%v_out%d_relu%v", c.x, c.out, c.relu) }

func (c linearCase) inputs(rng *rand.Rand) []input {
	in := 1
	for _, s := range c.x[1:] {
		in *= s
	}
	bias := []int{c.out}
	if c.biasDim == 2 {
		bias = []int{1, c.out}
	}
	return []input{randomInput(rng, "x", c.x...), randomInput(rng, "w", in, c.out), randomInput(rng, "b", bias...)}
}

func (c linearCase) ours(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
	x, err := notLeaf(nodes[0])
	if err != nil {
		return nil, err
	}
	return Linear(x, nodes[1], nodes[2], c.relu)
}

// builtin is Reshape, Mul, BroadcastAdd and, with relu, Rectify.
func (c linearCase) builtin(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
	x, err := notLeaf(nodes[0])
	if err != nil {
		return nil, err
	}
	in := nodes[1].Shape()[0]
	if x, err = gorgonia.Reshape(x, tensor.Shape{c.x[0], in}); err != nil {
		return nil, err
	}
	y, err := gorgonia.Mul(x, nodes[1])
	if err != nil {
		return nil, err
	}
	b := nodes[2]
	if b.Dims() == 1 {
		if b, err = gorgonia.Reshape(b, tensor.Shape{1, c.out}); err != nil {
			return nil, err
		}
	}
	if y, err = gorgonia.BroadcastAdd(y, b, nil, []byte{0}); err != nil || !c.relu {
		return y, err
	}
	return gorgonia.Rectify(y)
}

// TestLinearMatchesGorgonia compares output and gradients with Gorgonia's
// own ops at 1e-12 on two runs of one machine, and the gradients with
// central differences.
func TestLinearMatchesGorgonia(t *testing.T) {
	wrt := []int{0, 1, 2}
	for _, c := range linearCases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(10, uint64(c.out)))
			ins := c.inputs(rng)
			ours := newProbe(t, tensor.Float64, ins, wrt, rand.New(rand.NewPCG(11, 0)), c.ours)
			ref := newProbe(t, tensor.Float64, ins, wrt, rand.New(rand.NewPCG(11, 0)), c.builtin)
			for run := range 2 {
				if run == 1 {
					for i, in := range c.inputs(rng) {
						setAll(ours.vals[i], in.vals)
						setAll(ref.vals[i], in.vals)
					}
				}
				out, _, grads := ours.run(t)
				wantOut, _, wantGrads := ref.run(t)
				if d := maxRelDiff(out, wantOut); d > 1e-12 {
					t.Errorf("run %d: output differs by %.3g", run, d)
				}
				for k := range wrt {
					if d := maxRelDiff(grads[k], wantGrads[k]); d > 1e-12 {
						t.Errorf("run %d: gradient of %s differs by %.3g", run, ins[k].name, d)
					}
				}
			}
			fdCheck(t, ours, wrt, rng)
		})
	}
}
