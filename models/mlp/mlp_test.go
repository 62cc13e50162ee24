package mlp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/internal/modeltest"
)

// The paper's SARCOS network, 21→256→256→256 with seven 256→1 heads, by
// hand as PyTorch's numel() sums nn.Linear's weights and biases:
// 21·256 + 256 = 5,632, then 256·256 + 256 = 65,792 twice, so a trunk of
// 137,216; a head 256 + 1 = 257.
func TestParameterCounts(t *testing.T) {
	m := New(21, []int{256, 256, 256}, 1, 1, 1, 1, 1, 1, 1)
	if got := models.Size(m.TrunkParams()); got != 137_216 {
		t.Errorf("trunk: %d parameters, want 137,216", got)
	}
	for j := range 7 {
		if got := models.Size(m.HeadParams(j)); got != 257 {
			t.Errorf("head %d: %d parameters, want 257", j, got)
		}
	}
}

// Weights and biases from U(±1/√in), PyTorch's nn.Linear default.
func TestInitialisation(t *testing.T) {
	m := New(21, []int{256, 64}, 1, 3)
	modeltest.CheckUniform(t, m.TrunkParams(), map[string]float64{
		"fc1.weight": 1 / math.Sqrt(21), "fc1.bias": 1 / math.Sqrt(21),
		"fc2.weight": 1.0 / 16, "fc2.bias": 1.0 / 16,
	})
	modeltest.CheckUniform(t, m.HeadParams(1), map[string]float64{"head1.weight": 1.0 / 8, "head1.bias": 1.0 / 8})
}

// The graph computes ReLU layers and linear heads, checked against loops
// to 1e-12 on random inputs.
func TestForwardMatchesLoops(t *testing.T) {
	const batch, in = 4, 5
	hidden, outputs := []int{7, 3}, []int{1, 2}
	m := New(in, hidden, outputs...)
	p := modeltest.Init(m, len(outputs), 9)
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, batch*in)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	got := modeltest.Forward(t, m, x, batch, p)
	for b := range batch {
		h, w := x[b*in:(b+1)*in], p.Trunk
		for _, width := range hidden {
			h, w = dense(h, w, width, true)
		}
		for i, want := range h {
			if g := got.Features[b*hidden[1]+i]; math.Abs(g-want) > 1e-12 {
				t.Fatalf("example %d feature %d: %v, want %v", b, i, g, want)
			}
		}
		for j, n := range outputs {
			out, _ := dense(h, p.Heads[j], n, false)
			for c, want := range out {
				if g := got.Heads[j][b*n+c]; math.Abs(g-want) > 1e-12 {
					t.Fatalf("example %d head %d output %d: %v, want %v", b, j, c, g, want)
				}
			}
		}
	}
}

// dense applies the linear layer at the front of w (weight in×out stored
// (in, out), then bias) to x, with ReLU if relu, and returns the rest of w.
func dense(x, w []float64, out int, relu bool) ([]float64, []float64) {
	weight, bias := w[:len(x)*out], w[len(x)*out:len(x)*out+out]
	y := make([]float64, out)
	for o := range out {
		s := bias[o]
		for i, v := range x {
			s += v * weight[i*out+o]
		}
		if relu {
			s = max(s, 0)
		}
		y[o] = s
	}
	return y, w[len(x)*out+out:]
}
