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
	same := sameUpToOrder()
	rng := rand.New(rand.NewPCG(13, 0))
	rec, recorded, replayed := recordedAndReplayed(t)
	gRec, recGrads := recorded.vjp(t)
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

// Particles stacked across one batch (StackAcross) compute what each
// particle's own runs do: three particles, each with its own parameters,
// run on the same images a recorded graph (the first of two passes) and
// a replaying one (the second), as a worker's particles run a step. The
// first convolution (on the images) is armed across the particles, the
// second stacks its filter gradients per particle (StackFilterGrads).
// With gonum's BLAS every output and gradient must agree to the bit;
// with OpenBLAS, whose sums' order depends on the products' shapes, to
// 1e-12 of their norms (float64 sums of a few hundred terms).
func TestStackAcross(t *testing.T) {
	same := sameUpToOrder()
	rng := rand.New(rand.NewPCG(14, 0))
	rec, recorded, replayed := recordedAndReplayed(t)
	gRec, recGrads := recorded.vjp(t)
	gRep, repGrads := replayed.vjp(t)
	var conv *gorgonia.Node // the first convolution's forward node
	for _, n := range recorded.g.AllNodes() {
		if filters, ok := SharesPatches(n); ok {
			if conv != nil || filters != recorded.params[0] {
				t.Fatalf("%v shares its patches with filters %v, want only the convolution on parameter 0", n, filters)
			}
			conv = n
		}
	}
	if conv == nil {
		t.Fatal("no convolution shares its patches")
	}
	vmRec, vmRep := gorgonia.NewTapeMachine(recorded.g), gorgonia.NewTapeMachine(replayed.g)
	const particles, passes = 3, 2
	params := make([][][]float64, particles) // each particle's parameters
	for r := range params {
		recorded.set(rng)
		for _, v := range recorded.vals[1:] {
			params[r] = append(params[r], slices.Clone(v.Data().([]float64)))
		}
	}
	recorded.set(rng) // the images, the same for every particle
	replayed.copyFrom(recorded)
	ups := make([][]float64, passes)
	for j := range ups {
		ups[j] = randomInput(rng, "", gRec.Shape()...).vals
	}
	// run runs every particle's passes and returns, per particle, the
	// network's output, then every gradient of every pass, read right
	// after it; with across, the first convolution is stacked across the
	// particles and its filter gradients read after the last.
	run := func(across bool) [][][]float64 {
		t.Helper()
		if across {
			filters := make([][]float64, particles)
			for r := range filters {
				filters[r] = params[r][0]
			}
			if err := StackAcross(conv, filters, passes); err != nil {
				t.Fatal(err)
			}
		}
		out := make([][][]float64, particles)
		for r := range particles {
			for i, p := range params[r] {
				copy(recorded.vals[i+1].Data().([]float64), p)
				copy(replayed.vals[i+1].Data().([]float64), p)
			}
			if across {
				rec.StackFilterGrads(passes)
			}
			for j, up := range ups {
				vm, g, grads := vmRep, gRep, repGrads
				if j == 0 {
					vm, g, grads = vmRec, gRec, recGrads
				}
				setAll(g, up)
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				vm.Reset()
				if j == 0 {
					out[r] = append(out[r], slices.Clone(floats(recorded.out.Value())))
				}
				for _, n := range grads {
					out[r] = append(out[r], slices.Clone(floats(n.Value())))
				}
			}
			if across {
				if err := rec.FlushFilterGrads(); err != nil {
					t.Fatal(err)
				}
				for j := range passes {
					grads := repGrads
					if j == 0 {
						grads = recGrads
					}
					v, ok := StackedFilterGrad(grads[2], j)
					if !ok {
						t.Fatalf("particle %d, pass %d: the second convolution's filter gradient was not stacked", r, j)
					}
					copy(out[r][1+j*len(grads)+2], floats(v))
				}
			}
		}
		if across {
			if err := FlushAcross(conv); err != nil {
				t.Fatal(err)
			}
			for r := range particles {
				for j := range passes {
					grads := repGrads
					if j == 0 {
						grads = recGrads
					}
					v, ok := StackedFilterGrad(grads[0], r*passes+j)
					if !ok {
						t.Fatalf("particle %d, pass %d: the first convolution's filter gradient was not stacked", r, j)
					}
					copy(out[r][1+j*len(grads)], floats(v))
				}
			}
		}
		return out
	}
	want := run(false)
	got := run(true)
	for r := range want {
		for i := range want[r] {
			if !same(got[r][i], want[r][i]) {
				t.Errorf("particle %d, value %d (0 the output, then each pass's gradients) differs when stacked across particles", r, i)
			}
		}
	}

	// A particle whose filters are not those armed, or more runs than
	// armed, fail the run; fewer fail the flush.
	for r, p := range params[0] {
		copy(recorded.vals[r+1].Data().([]float64), p)
	}
	setAll(gRec, ups[0])
	if err := StackAcross(conv, [][]float64{params[1][0]}, 1); err != nil {
		t.Fatal(err)
	}
	if err := vmRec.RunAll(); err == nil || !strings.Contains(err.Error(), "not those it was armed with") {
		t.Errorf("a particle with other filters: %v", err)
	}
	vmRec.Reset()
	if err := StackAcross(conv, [][]float64{params[0][0], params[0][0]}, 1); err != nil {
		t.Fatal(err)
	}
	if err := vmRec.RunAll(); err != nil {
		t.Fatal(err)
	}
	vmRec.Reset()
	if err := FlushAcross(conv); err == nil || !strings.Contains(err.Error(), "1 of the 2") {
		t.Errorf("flush after 1 of 2 particles: %v", err)
	}
	if err := StackAcross(conv, [][]float64{params[0][0]}, 1); err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		err := vmRec.RunAll()
		vmRec.Reset()
		if k == 1 && (err == nil || !strings.Contains(err.Error(), "more forward runs")) {
			t.Errorf("a second run of one armed particle: %v", err)
		}
	}
	if err := StackAcross(conv, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := StackAcross(recorded.out, [][]float64{params[0][0]}, 1); err == nil {
		t.Error("armed a node that is not a convolution on the images")
	}
}

// sameUpToOrder compares float64 results that differ at most in the
// order of their sums: to the bit with gonum's BLAS (the products here
// stay below its 4 blocks of 64×64), else (OpenBLAS) to 1e-12 of want's
// norm, float64 rounding of sums of a few hundred terms.
func sameUpToOrder() func(got, want []float64) bool {
	_, bitwise := blas64.Implementation().(gonum.Implementation)
	return func(got, want []float64) bool {
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
}

// recordedAndReplayed builds a trunk net that records its ops and one
// that replays them, as the engine's step and trunk graphs do.
func recordedAndReplayed(t *testing.T) (*Recording, *trunkNet, *trunkNet) {
	t.Helper()
	var rec *Recording
	recorded := newTrunkNet(t, func(g *gorgonia.ExprGraph) { rec = Record(g) })
	if err := Stop(recorded.g); err != nil {
		t.Fatal(err)
	}
	replayed := newTrunkNet(t, func(g *gorgonia.ExprGraph) { Replay(g, rec) })
	if err := Stop(replayed.g); err != nil {
		t.Fatal(err)
	}
	return rec, recorded, replayed
}
