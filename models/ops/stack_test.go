package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"
)

// Stacked filter gradients are the same as one product per run: a
// recorded graph and a replaying one (as the engine's step and trunk
// graphs) run three times with three upstream gradients, once computing
// every gradient at each run and once with the convolutions' filter
// gradients stacked over the three runs and flushed after them. With
// gonum's BLAS (the pure-Go build) each entry is the same dot product in
// the same order, so they must agree to the bit; OpenBLAS (-tags
// openblas) splits a product with more rows differently, so there they
// must agree to 1e-12 of the gradient's norm (float64 rounding of sums
// of a few hundred terms). The other gradients are computed at each run
// either way; the stacked runs' filter-gradient nodes hold zeros.
func TestStackedFilterGrads(t *testing.T) {
	_, bitwise := blas64.Implementation().(gonum.Implementation)
	same := func(got, want []float64) bool {
		if bitwise {
			return slices.Equal(got, want)
		}
		var d, n float64
		for i := range got {
			d += (got[i] - want[i]) * (got[i] - want[i])
			n += want[i] * want[i]
		}
		return len(got) == len(want) && math.Sqrt(d) <= 1e-12*math.Sqrt(n)
	}
	rng := rand.New(rand.NewPCG(13, 0))
	var rec *Recording
	recorded := newTrunkNet(t, func(g *gorgonia.ExprGraph) { rec = Record(g) })
	if err := Stop(recorded.g); err != nil {
		t.Fatal(err)
	}
	gRec, recGrads := recorded.vjp(t)
	replayed := newTrunkNet(t, func(g *gorgonia.ExprGraph) { Replay(g, rec) })
	if err := Stop(replayed.g); err != nil {
		t.Fatal(err)
	}
	gRep, repGrads := replayed.vjp(t)
	filters := []int{0, 2} // the convolutions' filters among the parameters
	for _, i := range filters {
		if _, ok := recGrads[i].Op().(*convGradFilters); !ok {
			t.Fatalf("parameter %d's gradient is a %v, not a filter gradient", i, recGrads[i].Op())
		}
	}
	vmRec, vmRep := gorgonia.NewTapeMachine(recorded.g), gorgonia.NewTapeMachine(replayed.g)
	// runs runs the recorded graph with the first upstream gradient and
	// the replaying one with the others, and returns every gradient of
	// every run, read right after it.
	runs := func(ups [][]float64) [][][]float64 {
		t.Helper()
		var out [][][]float64
		for r, up := range ups {
			vm, g, grads := vmRep, gRep, repGrads
			if r == 0 {
				vm, g, grads = vmRec, gRec, recGrads
			}
			setAll(g, up)
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			vm.Reset()
			var got [][]float64
			for _, n := range grads {
				got = append(got, slices.Clone(floats(n.Value())))
			}
			out = append(out, got)
		}
		return out
	}
	for round := range 3 {
		recorded.set(rng)
		replayed.copyFrom(recorded)
		var ups [][]float64
		for range 3 {
			ups = append(ups, randomInput(rng, "", gRec.Shape()...).vals)
		}
		want := runs(ups)
		rec.StackFilterGrads(len(ups))
		got := runs(ups)
		if err := rec.FlushFilterGrads(); err != nil {
			t.Fatal(err)
		}
		for r := range ups {
			grads := repGrads
			if r == 0 {
				grads = recGrads
			}
			for i := range grads {
				if !slices.Contains(filters, i) {
					if !slices.Equal(got[r][i], want[r][i]) {
						t.Errorf("round %d, run %d: gradient %d differs when the filters' are stacked", round, r, i)
					}
					if _, ok := StackedFilterGrad(grads[i], r); ok {
						t.Errorf("parameter %d's gradient reads as stacked", i)
					}
					continue
				}
				if slices.ContainsFunc(got[r][i], func(v float64) bool { return v != 0 }) {
					t.Errorf("round %d, run %d: stacked filter gradient %d's node holds %v, want zeros", round, r, i, got[r][i])
				}
				v, ok := StackedFilterGrad(grads[i], r)
				if !ok {
					t.Fatalf("round %d, run %d: no stacked gradient for parameter %d", round, r, i)
				}
				if !same(floats(v), want[r][i]) {
					t.Errorf("round %d, run %d: stacked filter gradient %d\n got %v\nwant %v", round, r, i, v, want[r][i])
				}
			}
		}
	}

	// Fewer runs than armed fail the flush; more fail the run.
	ups := [][]float64{randomInput(rng, "", gRec.Shape()...).vals}
	rec.StackFilterGrads(2)
	runs(ups)
	if err := rec.FlushFilterGrads(); err == nil || !strings.Contains(err.Error(), "1 of the 2") {
		t.Errorf("flush after 1 of 2 runs: %v", err)
	}
	if _, ok := StackedFilterGrad(recGrads[0], 0); ok {
		t.Error("a failed flush left a stacked gradient to read")
	}
	rec.StackFilterGrads(1)
	setAll(gRec, ups[0])
	if err := vmRec.RunAll(); err != nil {
		t.Fatal(err)
	}
	vmRec.Reset()
	setAll(gRep, ups[0])
	if err := vmRep.RunAll(); err == nil || !strings.Contains(err.Error(), "more runs") {
		t.Errorf("a run past the stack: %v", err)
	}
	vmRep.Reset()
	rec.StackFilterGrads(0)
}
