package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// probe is a graph computing loss = Σ out ⊙ r (out·r for a scalar out)
// for a random r, so that ∂loss/∂out = r, with the gradients of loss with respect to its inputs.
// Each run after changing an input's values reruns the same machine, so
// every check through a probe also checks that the ops' reused buffers
// hold the new run's results.
type probe struct {
	vm     gorgonia.VM
	inputs []*gorgonia.Node
	vals   []*tensor.Dense
	out    *gorgonia.Node
	outV   gorgonia.Value
	loss   gorgonia.Value
	grads  gorgonia.Nodes
}

// input is an input tensor of a probe: its shape and values.
type input struct {
	name  string
	shape []int
	vals  []float64
}

func randomInput(rng *rand.Rand, name string, shape ...int) input {
	in := input{name: name, shape: shape}
	n := 1
	for _, s := range shape {
		n *= s
	}
	for range n {
		in.vals = append(in.vals, rng.NormFloat64())
	}
	return in
}

// newProbe builds out = f(input nodes) in dtype dt; with diff, the loss's
// gradients with respect to every input listed in wrt (indices).
func newProbe(t *testing.T, dt tensor.Dtype, ins []input, wrt []int, rng *rand.Rand, f func(nodes []*gorgonia.Node) (*gorgonia.Node, error)) *probe {
	t.Helper()
	g := gorgonia.NewGraph()
	p := &probe{}
	for _, in := range ins {
		v := tensor.New(tensor.WithShape(in.shape...), tensor.Of(dt))
		setAll(v, in.vals)
		n := gorgonia.NewTensor(g, dt, len(in.shape), gorgonia.WithShape(in.shape...), gorgonia.WithName(in.name), gorgonia.WithValue(v))
		p.inputs, p.vals = append(p.inputs, n), append(p.vals, v)
	}
	out, err := f(p.inputs)
	if err != nil {
		t.Fatal(err)
	}
	p.out = out
	gorgonia.Read(out, &p.outV)
	var loss *gorgonia.Node
	if out.IsScalar() {
		r := rng.NormFloat64()
		rn := gorgonia.NewScalar(g, dt, gorgonia.WithName("r"), gorgonia.WithValue(scalar(dt, r)))
		if loss, err = gorgonia.Mul(out, rn); err != nil {
			t.Fatal(err)
		}
	} else {
		r := tensor.New(tensor.WithShape(out.Shape()...), tensor.Of(dt))
		rv := make([]float64, out.Shape().TotalSize())
		for i := range rv {
			rv[i] = rng.NormFloat64()
		}
		setAll(r, rv)
		rn := gorgonia.NewTensor(g, dt, out.Dims(), gorgonia.WithShape(out.Shape()...), gorgonia.WithName("r"), gorgonia.WithValue(r))
		prod, err := gorgonia.HadamardProd(out, rn)
		if err != nil {
			t.Fatal(err)
		}
		if loss, err = gorgonia.Sum(prod); err != nil {
			t.Fatal(err)
		}
	}
	if len(wrt) > 0 {
		var nodes gorgonia.Nodes
		for _, i := range wrt {
			nodes = append(nodes, p.inputs[i])
		}
		if p.grads, err = gorgonia.Grad(loss, nodes...); err != nil {
			t.Fatal(err)
		}
	}
	gorgonia.Read(loss, &p.loss)
	p.vm = gorgonia.NewTapeMachine(g)
	return p
}

// run runs the graph and returns the output, the loss and the gradients.
func (p *probe) run(t *testing.T) (out []float64, loss float64, grads [][]float64) {
	t.Helper()
	defer p.vm.Reset()
	if err := p.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	out = floats(p.outV)
	loss = floats(p.loss)[0]
	for _, g := range p.grads {
		grads = append(grads, floats(g.Value()))
	}
	return out, loss, grads
}

func floats(v gorgonia.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out
	case float64:
		return []float64{d}
	case float32:
		return []float64{float64(d)}
	}
	panic(fmt.Sprintf("floats of %T", v.Data()))
}

func scalar(dt tensor.Dtype, v float64) any {
	if dt == tensor.Float32 {
		return float32(v)
	}
	return v
}

func setAll(t *tensor.Dense, vals []float64) {
	switch d := t.Data().(type) {
	case []float64:
		copy(d, vals)
	case []float32:
		for i, v := range vals {
			d[i] = float32(v)
		}
	}
}

// fdCheck compares p's gradient of input wrt[k] with central differences
// at a few coordinates: |fd − g| ≤ 1e-6 + 1e-5·|g| with h = 1e-5 in
// float64 (the loss is at most quadratic near the point, so the
// difference's error is O(h²)).
func fdCheck(t *testing.T, p *probe, wrt []int, rng *rand.Rand) {
	t.Helper()
	_, _, grads := p.run(t)
	const h = 1e-5
	for k, i := range wrt {
		vals := p.vals[i].Data().([]float64)
		for range 4 {
			c := rng.IntN(len(vals))
			orig := vals[c]
			vals[c] = orig + h
			_, up, _ := p.run(t)
			vals[c] = orig - h
			_, down, _ := p.run(t)
			vals[c] = orig
			fd := (up - down) / (2 * h)
			if g := grads[k][c]; math.Abs(fd-g) > 1e-6+1e-5*math.Abs(g) {
				t.Errorf("%s[%d]: gradient %.10g, central difference %.10g", p.inputs[i].Name(), c, g, fd)
			}
		}
	}
}

// maxRelDiff is max |a − b| / max(1, max |b|).
func maxRelDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale, d := 1.0, 0.0
	for i := range b {
		scale = max(scale, math.Abs(b[i]))
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d / scale
}
