// Package modeltest runs a models.Model forward on plain values, for the
// models' own tests: the trunk and every head are built into one float64
// graph from given parameter vectors, run once, and their outputs come back
// as slices that a test can compare with a reference written in loops.
package modeltest

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/models"
)

// Params are one network's flat parameter vectors.
type Params struct {
	Trunk []float64
	Heads [][]float64
}

// Init draws fresh parameters for m with its own initialisers.
func Init(m models.Model, tasks int, seed uint64) Params {
	rng := rand.New(rand.NewPCG(seed, 1))
	p := Params{Trunk: make([]float64, models.Size(m.TrunkParams()))}
	models.Init(m.TrunkParams(), rng, p.Trunk)
	for j := range tasks {
		h := make([]float64, models.Size(m.HeadParams(j)))
		models.Init(m.HeadParams(j), rng, h)
		p.Heads = append(p.Heads, h)
	}
	return p
}

// Output is what a forward pass computed: the trunk's features (batch ×
// width, row-major) and each head's outputs.
type Output struct {
	Features []float64
	Heads    [][]float64
}

// Forward runs m on the batch x (batch × m.InputShape(), row-major) with
// parameters p, batch normalisation (if any) in training mode.
func Forward(t testing.TB, m models.Model, x []float64, batch int, p Params) Output {
	t.Helper()
	g := gorgonia.NewGraph()
	shape := append([]int{batch}, m.InputShape()...)
	xn := gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(slices.Clone(x)))))
	features, err := m.Trunk(xn, nodes(g, m.TrunkParams(), p.Trunk), &models.Norm{})
	if err != nil {
		t.Fatal(err)
	}
	var heads []*gorgonia.Node
	for j, hp := range p.Heads {
		h, err := m.Head(features, j, nodes(g, m.HeadParams(j), hp))
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, h)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	out := Output{Features: values(t, features)}
	for _, h := range heads {
		out.Heads = append(out.Heads, values(t, h))
	}
	return out
}

// nodes are the parameters ps with the values of the flat vector v.
func nodes(g *gorgonia.ExprGraph, ps []models.Param, v []float64) []*gorgonia.Node {
	var ns []*gorgonia.Node
	for _, p := range ps {
		val := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(slices.Clone(v[:p.Size()])))
		ns = append(ns, gorgonia.NewTensor(g, tensor.Float64, len(p.Shape), gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name), gorgonia.WithValue(val)))
		v = v[p.Size():]
	}
	return ns
}

func values(t testing.TB, n *gorgonia.Node) []float64 {
	t.Helper()
	d, ok := n.Value().(*tensor.Dense)
	if !ok {
		t.Fatalf("%s holds %T, want a dense tensor", n.Name(), n.Value())
	}
	v, ok := d.Data().([]float64)
	if !ok {
		t.Fatalf("%s holds %T, want float64 values", n.Name(), d.Data())
	}
	return slices.Clone(v)
}

// CheckUniform draws each parameter of ps with its initialiser until it
// has at least 2,000 values and checks that its values look like U(−bound, bound) for
// bound = bounds[p.Name]: all within the bound, the largest magnitude
// within 2% of it, and the mean and variance within 5 standard errors of
// 0 and bound²/3 (the uniform distribution's).
func CheckUniform(t *testing.T, ps []models.Param, bounds map[string]float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, p := range ps {
		bound, ok := bounds[p.Name]
		if !ok {
			t.Errorf("%s: no expected bound", p.Name)
			continue
		}
		var v []float64
		for len(v) < 2000 {
			d := make([]float64, p.Size())
			p.Init(rng, d)
			v = append(v, d...)
		}
		var sum, sq, largest float64
		for _, x := range v {
			sum += x
			sq += x * x
			largest = max(largest, math.Abs(x))
		}
		n := float64(len(v))
		mean, variance := sum/n, sq/n
		want := bound * bound / 3
		// Standard errors: of the mean √(b²/3/n); of the mean square
		// √(Var(x²)/n) with Var(x²) = b⁴/5 − b⁴/9 for U(−b, b).
		seMean, seSq := math.Sqrt(want/n), math.Sqrt((1.0/5-1.0/9)/n)*bound*bound
		switch {
		case largest > bound:
			t.Errorf("%s: a value of magnitude %g, beyond the bound %g", p.Name, largest, bound)
		case largest < 0.98*bound:
			t.Errorf("%s: largest magnitude %g of %d draws, want near the bound %g", p.Name, largest, len(v), bound)
		case math.Abs(mean) > 5*seMean:
			t.Errorf("%s: mean %g, want 0 ± %g", p.Name, mean, 5*seMean)
		case math.Abs(variance-want) > 5*seSq:
			t.Errorf("%s: mean square %g, want %g ± %g", p.Name, variance, want, 5*seSq)
		}
	}
}
