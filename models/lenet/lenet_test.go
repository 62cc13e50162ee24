package lenet

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/internal/modeltest"
)

// The parameter counts are those of the multi-task LeNet of Sener &
// Koltun's code (MultiLeNetR + MultiLeNetO), by hand as PyTorch's
// numel() sums them: conv1 10·1·9·9 + 10 = 820, conv2 20·10·5·5 + 20 =
// 5,020, fc 500·50 + 50 = 25,050, so a trunk of 30,890; a 10-class head
// 50·10 + 10 = 510.
func TestParameterCounts(t *testing.T) {
	m := New(10, 10, 3)
	if got := models.Size(m.TrunkParams()); got != 30_890 {
		t.Errorf("trunk: %d parameters, want 30,890", got)
	}
	for j, want := range []int{510, 510, 153} {
		if got := models.Size(m.HeadParams(j)); got != want {
			t.Errorf("head %d: %d parameters, want %d", j, got, want)
		}
	}
	if len(m.TrunkStats()) != 0 {
		t.Errorf("%d statistics, want none (no batch normalisation)", len(m.TrunkStats()))
	}
}

// Every weight and bias is drawn from U(±1/√fan_in), PyTorch's default for
// nn.Conv2d and nn.Linear (kaiming_uniform_ with a = √5 gives the bound
// gain·√(3/fan_in) with gain √(2/(1+5)), that is 1/√fan_in; the bias uses
// 1/√fan_in directly).
func TestInitialisation(t *testing.T) {
	m := New(10, 10)
	modeltest.CheckUniform(t, m.TrunkParams(), map[string]float64{
		"conv1.weight": 1.0 / 9, "conv1.bias": 1.0 / 9,
		"conv2.weight": 1 / math.Sqrt(250), "conv2.bias": 1 / math.Sqrt(250),
		"fc.weight": 1 / math.Sqrt(500), "fc.bias": 1 / math.Sqrt(500),
	})
	modeltest.CheckUniform(t, m.HeadParams(1), map[string]float64{
		"head1.weight": 1 / math.Sqrt(50), "head1.bias": 1 / math.Sqrt(50),
	})
}

// The graph computes what the architecture in the package doc says,
// checked against the same network written as loops (reference, below) on
// random inputs and PyTorch-initialised parameters, to 1e-12.
func TestForwardMatchesLoops(t *testing.T) {
	const batch = 3
	m := New(10, 4)
	p := modeltest.Init(m, 2, 5)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, batch*Side*Side)
	for i := range x {
		x[i] = rng.Float64()
	}
	got := modeltest.Forward(t, m, x, batch, p)
	if len(got.Features) != batch*Features {
		t.Fatalf("%d feature values, want %d", len(got.Features), batch*Features)
	}
	for b := range batch {
		features := reference(x[b*Side*Side:(b+1)*Side*Side], p.Trunk)
		for i, want := range features {
			if g := got.Features[b*Features+i]; math.Abs(g-want) > 1e-12 {
				t.Fatalf("example %d feature %d: %v, want %v", b, i, g, want)
			}
		}
		for j, classes := range []int{10, 4} {
			for c := range classes {
				want := p.Heads[j][Features*classes+c] // bias
				for i, f := range features {
					want += f * p.Heads[j][i*classes+c]
				}
				if g := got.Heads[j][b*classes+c]; math.Abs(g-want) > 1e-12 {
					t.Fatalf("example %d head %d output %d: %v, want %v", b, j, c, g, want)
				}
			}
		}
	}
}

// reference is the trunk on one 36×36 image, in loops: PyTorch's layouts
// for the convolutions' weights (out, in, kh, kw), ours (in, out) for the
// linear layer's, the flattening in (channel, row, column) order.
func reference(img, trunk []float64) []float64 {
	conv1w, trunk := trunk[:810], trunk[810:]
	conv1b, trunk := trunk[:10], trunk[10:]
	conv2w, trunk := trunk[:5000], trunk[5000:]
	conv2b, trunk := trunk[:20], trunk[20:]
	fcw, fcb := trunk[:25000], trunk[25000:]
	h := convReLUPoolLoops(img, 1, Side, conv1w, conv1b, 10, 9) // 10×14×14
	h = convReLUPoolLoops(h, 10, 14, conv2w, conv2b, 20, 5)     // 20×5×5
	out := make([]float64, Features)
	for o := range Features {
		s := fcb[o]
		for i, v := range h {
			s += v * fcw[i*Features+o]
		}
		out[o] = max(s, 0)
	}
	return out
}

// convReLUPoolLoops is a valid convolution of a cin×side×side image with
// cout k×k filters, then ReLU and 2×2 max-pooling.
func convReLUPoolLoops(img []float64, cin, side int, w, b []float64, cout, k int) []float64 {
	conv := side - k + 1
	pooled := conv / 2
	out := make([]float64, cout*pooled*pooled)
	for o := range cout {
		for r := range pooled {
			for c := range pooled {
				best := math.Inf(-1)
				for dr := range 2 {
					for dc := range 2 {
						s := b[o]
						for i := range cin {
							for kr := range k {
								for kc := range k {
									s += w[((o*cin+i)*k+kr)*k+kc] * img[(i*side+2*r+dr+kr)*side+2*c+dc+kc]
								}
							}
						}
						best = max(best, s)
					}
				}
				out[(o*pooled+r)*pooled+c] = max(best, 0)
			}
		}
	}
	return out
}

// An input of another size is an error naming the shape, not a panic.
func TestRefusesOtherInputs(t *testing.T) {
	m := New(10)
	g := gorgonia.NewGraph()
	x := gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(2, 1, 28, 28), gorgonia.WithName("x"))
	var params []*gorgonia.Node
	for _, p := range m.TrunkParams() {
		params = append(params, gorgonia.NewTensor(g, tensor.Float64, len(p.Shape), gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name)))
	}
	_, err := m.Trunk(x, params, &models.Norm{})
	if err == nil || !strings.Contains(err.Error(), "(2, 1, 28, 28)") || !strings.Contains(err.Error(), "36") {
		t.Errorf("error %v, want one naming the shape (2, 1, 28, 28) and 36", err)
	}
}
