package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// xentInputs are logits (some large, to test the shift), one-hot targets
// and weights 1/real for real rows and 0 for padding.
func xentInputs(rng *rand.Rand, n, c, real int) []input {
	z := randomInput(rng, "z", n, c)
	z.vals[0] += 800 // exp(800) overflows without the shift
	y := input{name: "y", shape: []int{n, c}, vals: make([]float64, n*c)}
	w := input{name: "w", shape: []int{n}, vals: make([]float64, n)}
	for i := range n {
		y.vals[i*c+rng.IntN(c)] = 1
		if i < real {
			w.vals[i] = 1 / float64(real)
		}
	}
	return []input{z, y, w}
}

// xentReference is the loss computed directly: Σ_i w_i·(log Σ_c exp z_ic
// − z_i,label), with the row maximum subtracted.
func xentReference(z, y, w []float64, n, c int) float64 {
	var loss float64
	for i := range n {
		row := z[i*c : (i+1)*c]
		m := row[0]
		for _, v := range row {
			m = math.Max(m, v)
		}
		var s, picked float64
		for k, v := range row {
			s += math.Exp(v - m)
			picked += y[i*c+k] * v
		}
		loss += w[i] * (m + math.Log(s) - picked)
	}
	return loss
}

// TestSoftmaxCrossEntropy checks the loss against xentReference (1e-12
// relative in float64, 1e-5 in float32) on two runs of one machine and
// its gradient against central differences; padding rows weigh nothing.
func TestSoftmaxCrossEntropy(t *testing.T) {
	const n, c, real = 6, 4, 5
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		rng := rand.New(rand.NewPCG(15, 0))
		ins := xentInputs(rng, n, c, real)
		var node *gorgonia.Node
		p := newProbe(t, dt, ins, []int{0}, rng, func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
			z, err := notLeaf(nodes[0])
			if err != nil {
				return nil, err
			}
			node, err = SoftmaxCrossEntropy(z, nodes[1], nodes[2])
			return node, err
		})
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		for run := range 2 {
			if run == 1 {
				ins = xentInputs(rng, n, c, real)
				for i, in := range ins {
					setAll(p.vals[i], in.vals)
				}
			}
			out, _, grads := p.run(t)
			want := xentReference(ins[0].vals, ins[1].vals, ins[2].vals, n, c)
			if math.Abs(out[0]-want) > tol*math.Abs(want) {
				t.Errorf("%v run %d: loss %.12g, reference %.12g", dt, run, out[0], want)
			}
			for i := real * c; i < n*c; i++ {
				if grads[0][i] != 0 {
					t.Errorf("%v run %d: padding logit %d has gradient %v", dt, run, i, grads[0][i])
				}
			}
		}
		if dt == tensor.Float64 {
			p.vals[0].Data().([]float64)[0] -= 800 // central differences need moderate logits
			fdCheck(t, p, []int{0}, rng)
		}
	}
}

// TestCopy: the copy's values are its input's and its gradient passes
// through unchanged (central differences).
func TestCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 0))
	ins := []input{randomInput(rng, "x", 3, 4)}
	p := newProbe(t, tensor.Float64, ins, []int{0}, rng, func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
		x, err := notLeaf(nodes[0])
		if err != nil {
			return nil, err
		}
		return Copy(x)
	})
	out, _, _ := p.run(t)
	if d := maxRelDiff(out, ins[0].vals); d != 0 {
		t.Errorf("copy differs by %.3g", d)
	}
	fdCheck(t, p, []int{0}, rng)
}

// TestInner: the value against a direct sum, the gradient with respect
// to x against central differences.
func TestInner(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 0))
	ins := []input{randomInput(rng, "x", 3, 4), randomInput(rng, "g", 3, 4)}
	p := newProbe(t, tensor.Float64, ins, []int{0}, rng, func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
		x, err := notLeaf(nodes[0])
		if err != nil {
			return nil, err
		}
		return Inner(x, nodes[1])
	})
	out, _, _ := p.run(t)
	var want float64
	for i, v := range ins[0].vals {
		want += v * ins[1].vals[i]
	}
	if math.Abs(out[0]-want) > 1e-12*math.Abs(want) {
		t.Errorf("inner product %v, want %v", out[0], want)
	}
	fdCheck(t, p, []int{0}, rng)
}

// TestKeep: a Keep node holds its input's values after each run, in
// float64 from a float32 graph too.
func TestKeep(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 0))
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		var kept *Kept
		ins := []input{randomInput(rng, "x", 2, 3)}
		p := newProbe(t, dt, ins, []int{0}, rng, func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
			x, err := notLeaf(nodes[0])
			if err != nil {
				return nil, err
			}
			y, err := Copy(x)
			if err != nil {
				return nil, err
			}
			kept, err = Keep(y)
			return y, err
		})
		for run := range 2 {
			if run == 1 {
				ins[0] = randomInput(rng, "x", 2, 3)
				setAll(p.vals[0], ins[0].vals)
			}
			out, _, _ := p.run(t)
			if d := maxRelDiff(kept.Values, out); d != 0 {
				t.Errorf("%v run %d: kept %v, values %v", dt, run, kept.Values, out)
			}
		}
	}
}
