package ops

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A replay reads the run whose kept values Exchange gave back, though
// other runs came between: a recorded graph without gradients (as the
// heads-only step graph), made ready by KeepForReplay, runs two
// parameter sets in turn on one input, setting each run aside; the
// replayed graph's gradients for each, given back in the other order,
// equal those of a graph that runs its own forward pass with that set,
// to 1e-12. Three rounds, so that the ops reuse the values set aside.
func TestExchangedReplayMatchesFullGraph(t *testing.T) {
	exchangedReplay(t, newTrunkNet, 1e-12)
}

// The same for a float32 trunk whose second convolution runs Winograd's
// products, whose replayed input gradient needs the filters' transform U
// of the particle replayed, not of the one run last: to the bit.
func TestExchangedReplayWinograd(t *testing.T) {
	exchangedReplay(t, newWinoNet, 0)
}

// exchangedReplay is TestExchangedReplayMatchesFullGraph for the nets
// newNet makes, to tol.
func exchangedReplay(t *testing.T, newNet func(*testing.T, func(*gorgonia.ExprGraph)) *trunkNet, tol float64) {
	rng := rand.New(rand.NewPCG(13, 0))
	var rec *Recording
	recorded := newNet(t, func(g *gorgonia.ExprGraph) { rec = Record(g) })
	if err := Stop(recorded.g); err != nil {
		t.Fatal(err)
	}
	if err := rec.KeepForReplay(); err != nil {
		t.Fatal(err)
	}
	replayed := newNet(t, func(g *gorgonia.ExprGraph) { Replay(g, rec) })
	if err := Stop(replayed.g); err != nil {
		t.Fatal(err)
	}
	gRep, repGrads := replayed.vjp(t)
	full := newNet(t, nil)
	gFull, fullGrads := full.vjp(t)
	runVM := func(vm gorgonia.VM) {
		t.Helper()
		defer vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
	}
	vmRec, vmRep, vmFull := gorgonia.NewTapeMachine(recorded.g), gorgonia.NewTapeMachine(replayed.g), gorgonia.NewTapeMachine(full.g)
	sets := make([]*trunkNet, 2) // each run's values, kept in a net of their own
	for i := range sets {
		sets[i] = newNet(t, nil)
	}
	held := make([]SavedPass, 2)
	for round := range 3 {
		sets[0].set(rng)
		sets[1].set(rng)
		setAll(sets[1].vals[0], floats(sets[0].vals[0])) // one input
		for i := range sets {
			recorded.copyFrom(sets[i])
			runVM(vmRec)
			if recorded.conv != nil {
				if st, ok := convOf(t, recorded.conv).state.(*convState[float32]); !ok || !st.wino {
					t.Fatal("the convolution did not run Winograd's products")
				}
			}
			rec.Exchange(&held[i])
		}
		for _, i := range []int{1, 0} {
			rec.Exchange(&held[i])
			replayed.copyFrom(sets[i])
			full.copyFrom(sets[i])
			up := randomInput(rng, "", gRep.Shape()...).vals
			setAll(gRep, up)
			setAll(gFull, up)
			runVM(vmRep)
			got := make([][]float64, len(repGrads))
			for k, g := range repGrads {
				got[k] = floats(g.Value())
			}
			runVM(vmFull)
			for k, g := range fullGrads {
				if d := maxRelDiff(got[k], floats(g.Value())); d > tol {
					t.Errorf("round %d, set %d: gradient of parameter %d differs by %.3g", round, i, k, d)
				}
			}
		}
	}
}

// KeepForReplay refuses a recording with an op whose kept values cannot
// be set aside (batch norm, whose statistics the graph reads after its
// run), and then changes nothing.
func TestKeepForReplayRefusesBatchNorm(t *testing.T) {
	g := gorgonia.NewGraph()
	rec := Record(g)
	x := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(2, 3, 4, 4), gorgonia.WithName("x"))
	w := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(3, 3, 3, 3), gorgonia.WithName("w"))
	p := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(1, 3, 1, 1), gorgonia.WithName("p"))
	weight := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("weight"))
	h, err := Conv2d(x, w, nil, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := BatchNorm(h, p, p, weight, 1e-5); err != nil {
		t.Fatal(err)
	}
	if err := Stop(g); err != nil {
		t.Fatal(err)
	}
	if err := rec.KeepForReplay(); err == nil || !strings.Contains(err.Error(), "cannot set") {
		t.Errorf("KeepForReplay: %v, want a refusal naming the op", err)
	}
	if rec.ops[0].(*convOp).keepCols {
		t.Error("the refused KeepForReplay made the convolution keep its patches")
	}
}

// SavedPassBytes counts what a SavedPass holds after a run: the trunk's values set
// aside, measured by walking them, in float64 (the net's dtype).
func TestHeldBytes(t *testing.T) {
	var rec *Recording
	net := newTrunkNet(t, func(g *gorgonia.ExprGraph) { rec = Record(g) })
	if err := Stop(net.g); err != nil {
		t.Fatal(err)
	}
	if err := rec.KeepForReplay(); err != nil {
		t.Fatal(err)
	}
	net.set(rand.New(rand.NewPCG(14, 0)))
	vm := gorgonia.NewTapeMachine(net.g)
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var h SavedPass
	rec.Exchange(&h)
	measured := 0
	size := func(b buffer) int { return 8 * b.t.Shape().TotalSize() }
	for _, part := range h.parts {
		switch p := part.(type) {
		case *convSaved:
			measured += size(p.out)
			if c, ok := p.cols.(scratch[float64]); ok {
				measured += 8 * len(c)
			}
		case *poolSaved:
			measured += size(p.out) + 4*len(p.argmax)
		case *buffer:
			measured += size(*p)
		case *linearSaved:
			st := p.kept.(*linearState[float64])
			measured += size(p.out) + 8*(len(st.x)+len(st.y))
		default:
			t.Fatalf("a part of %T", part)
		}
	}
	got, err := rec.SavedPassBytes(8)
	if err != nil {
		t.Fatal(err)
	}
	if got != measured {
		t.Errorf("SavedPassBytes(8) = %d, the SavedPass holds %d bytes", got, measured)
	}
}
