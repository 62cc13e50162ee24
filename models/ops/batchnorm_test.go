package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnCase is a batch of n examples of which the last pad are padding
// (weight 0); the others weigh 1/(n − pad) each.
type bnCase struct {
	name         string
	n, c, h, w   int
	pad          int
	gammaOffset  float64 // added to the random scale, away from zero
	centreOffset float64 // added to x: large means, as after a ReLU
}

var bnCases = []bnCase{
	{name: "full", n: 4, c: 3, h: 5, w: 4},
	{name: "padded", n: 5, c: 2, h: 3, w: 3, pad: 2, gammaOffset: 1},
	{name: "1x1", n: 6, c: 4, h: 1, w: 1, pad: 1},
	{name: "offset", n: 3, c: 2, h: 4, w: 4, centreOffset: 5},
}

func (c bnCase) inputs(rng *rand.Rand) []input {
	x := randomInput(rng, "x", c.n, c.c, c.h, c.w)
	for i := range x.vals {
		x.vals[i] += c.centreOffset
	}
	gamma := randomInput(rng, "gamma", 1, c.c, 1, 1)
	for i := range gamma.vals {
		gamma.vals[i] += c.gammaOffset
	}
	weight := input{name: "weight", shape: []int{c.n}}
	for i := range c.n {
		w := 0.0
		if i < c.n-c.pad {
			w = 1 / float64(c.n-c.pad)
		}
		weight.vals = append(weight.vals, w)
	}
	return []input{x, gamma, randomInput(rng, "beta", 1, c.c, 1, 1), weight}
}

// bnReference is batch normalisation computed directly from its
// definition: each channel's mean and biased variance over the real
// examples' values, then (x − μ)/√(σ² + ε)·γ + β.
func bnReference(c bnCase, x, gamma, beta []float64, eps float64) (y, mean, variance []float64) {
	hw := c.h * c.w
	y = make([]float64, len(x))
	for ch := range c.c {
		var vals []float64
		for i := range c.n - c.pad {
			vals = append(vals, x[(i*c.c+ch)*hw:(i*c.c+ch+1)*hw]...)
		}
		var m, v float64
		for _, a := range vals {
			m += a
		}
		m /= float64(len(vals))
		for _, a := range vals {
			v += (a - m) * (a - m)
		}
		v /= float64(len(vals))
		mean, variance = append(mean, m), append(variance, v)
		for i := range c.n {
			for j := range hw {
				k := (i*c.c+ch)*hw + j
				y[k] = (x[k]-m)/math.Sqrt(v+eps)*gamma[ch] + beta[ch]
			}
		}
	}
	return y, mean, variance
}

func (c bnCase) build(eps float64, stats **BatchStats) func([]*gorgonia.Node) (*gorgonia.Node, error) {
	return func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
		x, err := notLeaf(nodes[0])
		if err != nil {
			return nil, err
		}
		y, s, err := BatchNorm(x, nodes[1], nodes[2], nodes[3], eps)
		*stats = s
		return y, err
	}
}

// TestBatchNormForward compares the output and the statistics with
// bnReference, in float64 to 1e-12 and float32 to 1e-5, on two runs of one
// machine with different inputs; padding rows must not change them.
func TestBatchNormForward(t *testing.T) {
	const eps = 1e-5
	for _, c := range bnCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(c.n)))
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 1e-5
				}
				var stats *BatchStats
				ins := c.inputs(rng)
				p := newProbe(t, dt, ins, []int{0, 1, 2}, rng, c.build(eps, &stats))
				for run := range 2 {
					if run == 1 {
						ins = c.inputs(rng)
						for i, in := range ins {
							setAll(p.vals[i], in.vals)
						}
					}
					y, _, _ := p.run(t)
					wantY, wantMean, wantVar := bnReference(c, ins[0].vals, ins[1].vals, ins[2].vals, eps)
					if d := maxRelDiff(y, wantY); d > tol {
						t.Errorf("%v run %d: output differs by %.3g", dt, run, d)
					}
					if d := maxRelDiff(stats.Mean, wantMean); d > tol {
						t.Errorf("%v run %d: mean %v, want %v", dt, run, stats.Mean, wantMean)
					}
					if d := maxRelDiff(stats.Variance, wantVar); d > tol {
						t.Errorf("%v run %d: variance %v, want %v", dt, run, stats.Variance, wantVar)
					}
				}
			}
		})
	}
}

// TestBatchNormFiniteDifferences checks the gradients with respect to x,
// γ and β against central differences (fdCheck), with a loss that also
// weights the padding rows' outputs, which depend on the real rows
// through the statistics.
func TestBatchNormFiniteDifferences(t *testing.T) {
	for _, c := range bnCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(6, uint64(c.n)))
			var stats *BatchStats
			wrt := []int{0, 1, 2}
			p := newProbe(t, tensor.Float64, c.inputs(rng), wrt, rng, c.build(1e-5, &stats))
			fdCheck(t, p, wrt, rng)
		})
	}
}

// TestBatchNormPaddingGradient checks that a padding row's values reach
// nothing: its output's gradient flows only into itself (s·γ·g), so
// changing its input changes no real row's output.
func TestBatchNormPaddingGradient(t *testing.T) {
	c := bnCases[1]
	rng := rand.New(rand.NewPCG(7, 0))
	var stats *BatchStats
	ins := c.inputs(rng)
	p := newProbe(t, tensor.Float64, ins, []int{0}, rng, c.build(1e-5, &stats))
	y, _, _ := p.run(t)
	x := p.vals[0].Data().([]float64)
	real := (c.n - c.pad) * c.c * c.h * c.w
	for i := real; i < len(x); i++ {
		x[i] += 100
	}
	y2, _, _ := p.run(t)
	if d := maxRelDiff(y2[:real], y[:real]); d > 1e-14 {
		t.Errorf("changing padding rows changed real outputs by %.3g", d)
	}
}

// TestBatchNormRunning compares evaluation-mode batch normalisation with
// its definition, (x − mean)/√(variance + ε)·γ + β per channel, for given
// statistics: float64 to 1e-12, float32 to 1e-5 (relative to the largest
// output).
func TestBatchNormRunning(t *testing.T) {
	const eps = 1e-5
	for _, c := range bnCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(6, uint64(c.n)))
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 1e-5
				}
				ins := c.inputs(rng)[:3]
				mean, variance := randomInput(rng, "mean", 1, c.c, 1, 1), input{name: "variance", shape: []int{1, c.c, 1, 1}}
				for range c.c {
					variance.vals = append(variance.vals, 0.1+rng.Float64())
				}
				ins = append(ins, mean, variance)
				p := newProbe(t, dt, ins, nil, rng, func(nodes []*gorgonia.Node) (*gorgonia.Node, error) {
					x, err := notLeaf(nodes[0])
					if err != nil {
						return nil, err
					}
					return BatchNormRunning(x, nodes[1], nodes[2], nodes[3], nodes[4], eps)
				})
				y, _, _ := p.run(t)
				x, gamma, beta := ins[0].vals, ins[1].vals, ins[2].vals
				want := make([]float64, len(x))
				hw := c.h * c.w
				for i := range x {
					ch := (i / hw) % c.c
					want[i] = (x[i]-mean.vals[ch])/math.Sqrt(variance.vals[ch]+eps)*gamma[ch] + beta[ch]
				}
				if d := maxRelDiff(y, want); d > tol {
					t.Errorf("%v: output differs by %.3g", dt, d)
				}
			}
		})
	}
}
