package ops

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// trunkNet is a small LeNet-shaped trunk: conv 3×3 + bias → ReLU + 2×2
// max-pool → conv 3×3 → ReLU + max-pool 3×3/2 padding 1 → linear + ReLU.
type trunkNet struct {
	g      *gorgonia.ExprGraph
	dt     tensor.Dtype
	x      *gorgonia.Node
	params []*gorgonia.Node
	vals   []*tensor.Dense
	out    *gorgonia.Node
	conv   *gorgonia.Node // newWinoNet's second convolution's output
}

var trunkShapes = [][]int{{4, 2, 10, 10}, {3, 2, 3, 3}, {1, 3, 1, 1}, {4, 3, 3, 3}, {36, 5}, {5}}

func newTrunkNet(t *testing.T, before func(g *gorgonia.ExprGraph)) *trunkNet {
	t.Helper()
	n := newNetInputs(tensor.Float64, trunkShapes, before)
	p := n.params
	h, err := Conv2d(n.x, p[0], p[1], 1, 1)
	if err == nil {
		h, err = ReLUMaxPool2d(h, 2, 2, 0)
	}
	if err == nil {
		h, err = Conv2d(h, p[2], nil, 1, 1)
	}
	if err == nil {
		h, err = ReLUMaxPool2d(h, 3, 2, 1)
	}
	if err == nil {
		h, err = Linear(h, p[3], p[4], true)
	}
	if err != nil {
		t.Fatal(err)
	}
	n.out = h
	return n
}

// newNetInputs starts a net of dtype dt in a new graph: its input and
// parameters, of the shapes given (the input's first), then before.
func newNetInputs(dt tensor.Dtype, shapes [][]int, before func(g *gorgonia.ExprGraph)) *trunkNet {
	g := gorgonia.NewGraph()
	n := &trunkNet{g: g, dt: dt}
	for i, s := range shapes {
		v := tensor.New(tensor.WithShape(s...), tensor.Of(dt))
		node := gorgonia.NewTensor(g, dt, len(s), gorgonia.WithShape(s...), gorgonia.WithName(string(rune('a'+i))), gorgonia.WithValue(v))
		n.vals = append(n.vals, v)
		if i == 0 {
			n.x = node
		} else {
			n.params = append(n.params, node)
		}
	}
	if before != nil {
		before(g)
	}
	return n
}

// set gives the net's inputs and parameters random values.
func (n *trunkNet) set(rng *rand.Rand) {
	for _, v := range n.vals {
		vals := make([]float64, v.Shape().TotalSize())
		for i := range vals {
			vals[i] = rng.NormFloat64()
		}
		setAll(v, vals)
	}
}

func (n *trunkNet) copyFrom(o *trunkNet) {
	for i, v := range n.vals {
		setAll(v, floats(o.vals[i]))
	}
}

// winoShapes are newWinoNet's input and filters.
var winoShapes = [][]int{{2, 3, 8, 8}, {4, 3, 3, 3}, {5, 4, 3, 3}}

// newWinoNet is a float32 trunk whose second convolution runs Winograd's
// products (3×3, stride 1, padding 1, its input not a leaf, no pool
// after it): conv 3×3 → ReLU → conv 3×3 → ReLU.
func newWinoNet(t *testing.T, before func(g *gorgonia.ExprGraph)) *trunkNet {
	t.Helper()
	n := newNetInputs(tensor.Float32, winoShapes, before)
	h, err := Conv2d(n.x, n.params[0], nil, 1, 1)
	if err == nil {
		h, err = ReLU(h)
	}
	if err == nil {
		n.conv, err = Conv2d(h, n.params[1], nil, 1, 1)
	}
	if err == nil {
		h, err = ReLU(n.conv)
	}
	if err != nil {
		t.Fatal(err)
	}
	n.out = h
	return n
}

// vjp adds Σ out ⊙ G for an input G and returns G's tensor and the
// gradients with respect to the parameters.
func (n *trunkNet) vjp(t *testing.T) (*tensor.Dense, gorgonia.Nodes) {
	t.Helper()
	s := n.out.Shape()
	gv := tensor.New(tensor.WithShape(s...), tensor.Of(n.dt))
	g := gorgonia.NewTensor(n.g, n.dt, len(s), gorgonia.WithShape(s...), gorgonia.WithName("G"), gorgonia.WithValue(gv))
	prod, err := gorgonia.HadamardProd(n.out, g)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := gorgonia.Sum(prod)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := gorgonia.Grad(inner, n.params...)
	if err != nil {
		t.Fatal(err)
	}
	return gv, grads
}

// A replayed graph's parameter gradients equal those of a graph that runs
// its forward pass, when it runs right after the recorded graph with the
// same inputs and parameters: over three rounds with new values, each
// with two upstream gradients, to 1e-12.
func TestReplayMatchesFullGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 0))
	var rec *Recording
	recorded := newTrunkNet(t, func(g *gorgonia.ExprGraph) { rec = Record(g) })
	if err := Stop(recorded.g); err != nil {
		t.Fatal(err)
	}
	gRec, _ := recorded.vjp(t) // differentiated, as the step graph is
	replayed := newTrunkNet(t, func(g *gorgonia.ExprGraph) { Replay(g, rec) })
	if err := Stop(replayed.g); err != nil {
		t.Fatal(err)
	}
	gRep, repGrads := replayed.vjp(t)
	full := newTrunkNet(t, nil)
	gFull, fullGrads := full.vjp(t)
	vms := []gorgonia.VM{gorgonia.NewTapeMachine(recorded.g), gorgonia.NewTapeMachine(replayed.g), gorgonia.NewTapeMachine(full.g)}
	runVM := func(vm gorgonia.VM) {
		t.Helper()
		defer vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		recorded.set(rng)
		replayed.copyFrom(recorded)
		full.copyFrom(recorded)
		setAll(gRec, randomInput(rng, "", gRec.Shape()...).vals)
		runVM(vms[0])
		for range 2 {
			up := randomInput(rng, "", gRep.Shape()...).vals
			setAll(gRep, up)
			setAll(gFull, up)
			runVM(vms[1])
			got := make([][]float64, len(repGrads))
			for i, g := range repGrads {
				got[i] = floats(g.Value())
			}
			runVM(vms[2])
			for i, g := range fullGrads {
				if d := maxRelDiff(got[i], floats(g.Value())); d > 1e-12 {
					t.Errorf("round %d: gradient of parameter %d differs by %.3g", round, i, d)
				}
			}
		}
	}
}

// Replay refuses graphs it cannot stand in for: another op order, an op
// of Gorgonia's in the replayed part, an op that cannot replay.
func TestReplayRefuses(t *testing.T) {
	var rec *Recording
	recorded := newTrunkNet(t, func(g *gorgonia.ExprGraph) { rec = Record(g) })
	if err := Stop(recorded.g); err != nil {
		t.Fatal(err)
	}
	recorded.vjp(t)

	t.Run("extra Gorgonia op", func(t *testing.T) {
		n := newTrunkNet(t, func(g *gorgonia.ExprGraph) { Replay(g, rec) })
		if _, err := gorgonia.Rectify(n.out); err != nil {
			t.Fatal(err)
		}
		if err := Stop(n.g); err == nil || !strings.Contains(err.Error(), "can replay") {
			t.Errorf("Stop: %v, want an op that cannot replay named", err)
		}
	})
	t.Run("different op", func(t *testing.T) {
		g := gorgonia.NewGraph()
		Replay(g, rec)
		defer Stop(g)
		x := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(4, 2, 10, 10), gorgonia.WithName("x"))
		if _, err := ReLUMaxPool2d(x, 2, 2, 0); err == nil {
			t.Error("a pooling op replayed a convolution")
		}
	})
	t.Run("batch norm", func(t *testing.T) {
		g := gorgonia.NewGraph()
		Replay(g, &Recording{ops: rec.ops[:1]})
		defer Stop(g)
		x := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(2, 3, 4, 4), gorgonia.WithName("x"))
		p := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(1, 3, 1, 1), gorgonia.WithName("p"))
		w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("w"))
		if _, _, err := BatchNorm(x, p, p, w, 1e-5); err == nil {
			t.Error("batch norm replayed")
		}
	})
	t.Run("fewer ops", func(t *testing.T) {
		g := gorgonia.NewGraph()
		Replay(g, rec)
		if err := Stop(g); err == nil {
			t.Error("Stop after replaying no op")
		}
	})
}
