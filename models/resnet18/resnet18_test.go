package resnet18

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/models"
)

// The trunk has the parameters of torchvision's resnet18 without its
// final layer: 11,689,512 in all (torchvision's documentation) minus the
// 512·1000 + 1000 = 513,000 of the fully connected layer.
func TestTrunkParameterCount(t *testing.T) {
	if got := models.Size(New(2).TrunkParams()); got != 11_176_512 {
		t.Errorf("%d trunk parameters, want 11,176,512", got)
	}
	// 20 batch norms: bn1, 2 per block, 3 shortcuts; 4,800 channels.
	stats := New(2).TrunkStats()
	if len(stats) != 40 || models.Size(stats) != 2*4800 {
		t.Errorf("%d statistics vectors of %d values, want 40 of 9,600", len(stats), models.Size(stats))
	}
}

// graph is a trunk on a bound random batch.
type graph struct {
	g        *gorgonia.ExprGraph
	features *gorgonia.Node
	norm     *models.Norm
}

// newGraph adds the trunk to g (a new graph if nil) on the batch x, with
// example weights if given.
func newGraph(t *testing.T, g *gorgonia.ExprGraph, r *ResNet, dt tensor.Dtype, x []float64, batch int, params []float64, norm *models.Norm, weights []float64) *graph {
	t.Helper()
	if g == nil {
		g = gorgonia.NewGraph()
	}
	shape := append([]int{batch}, r.InputShape()...)
	xn := gorgonia.NewTensor(g, dt, 4, gorgonia.WithShape(shape...), gorgonia.WithName("x"), gorgonia.WithValue(dense(dt, shape, x)))
	if weights != nil {
		norm.Weight = gorgonia.NewVector(g, dt, gorgonia.WithShape(batch), gorgonia.WithName("w"), gorgonia.WithValue(dense(dt, []int{batch}, weights)))
	}
	var nodes []*gorgonia.Node
	for _, p := range r.TrunkParams() {
		nodes = append(nodes, gorgonia.NewTensor(g, dt, len(p.Shape), gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name),
			gorgonia.WithValue(dense(dt, p.Shape, params[:p.Size()]))))
		params = params[p.Size():]
	}
	f, err := r.Trunk(xn, nodes, norm)
	if err != nil {
		t.Fatal(err)
	}
	return &graph{g: g, features: f, norm: norm}
}

func dense(dt tensor.Dtype, shape []int, v []float64) *tensor.Dense {
	if dt == tensor.Float64 {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(slices.Clone(v)))
	}
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
}

func floats(t *testing.T, n *gorgonia.Node) []float64 {
	t.Helper()
	return values(t, n.Value())
}

func values(t *testing.T, v gorgonia.Value) []float64 {
	t.Helper()
	if v == nil {
		t.Fatal("no value")
	}
	switch d := v.Data().(type) {
	case []float64:
		return slices.Clone(d)
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out
	}
	t.Fatalf("value of %T", v.Data())
	return nil
}

func randoms(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// On a 64×64 input the standard network gives 512 features per example,
// and its batch norms see the spatial sizes of torchvision's resnet18:
// 32×32 after the first convolution, 16×16 in layer1 (after pooling), then
// 8×8, 4×4 and 2×2 in layers 2-4.
func TestShapes64(t *testing.T) {
	r := New(2, 2)
	rng := rand.New(rand.NewPCG(1, 0))
	params := make([]float64, models.Size(r.TrunkParams()))
	models.Init(r.TrunkParams(), rng, params)
	const batch = 2
	x := make([]float64, batch*3*Side*Side)
	for i := range x {
		x[i] = rng.Float64()
	}
	gr := newGraph(t, nil, r, tensor.Float32, x, batch, params, &models.Norm{}, []float64{0.5, 0.5})
	if !slices.Equal(gr.features.Shape(), tensor.Shape{batch, 512}) {
		t.Errorf("features of shape %v, want (2, 512)", gr.features.Shape())
	}
	want := []int{32 * 32, 256, 256, 256, 256, 64, 64, 64, 64, 64, 16, 16, 16, 16, 16, 4, 4, 4, 4, 4}
	if !slices.Equal(gr.norm.Spatial, want) {
		t.Errorf("batch norms over %v values per channel, want %v", gr.norm.Spatial, want)
	}
	vm := gorgonia.NewTapeMachine(gr.g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	f := floats(t, gr.features)
	if len(f) != batch*512 {
		t.Fatalf("%d feature values", len(f))
	}
	for i, v := range f {
		if !(v >= 0) || math.IsInf(v, 0) { // means of ReLU outputs
			t.Fatalf("feature %d is %v", i, v)
		}
	}
}

// The graph's trunk computes what a direct implementation of ResNet-18
// (reference_test.go: loops over pixels, no Gorgonia) computes, in
// training mode (batch statistics over the real examples only, padding of
// weight zero excluded) and in evaluation mode (given running statistics),
// and reports the batch means and variances the reference sees. Float64,
// tolerance 1e-9 relative to the largest value.
func TestTrunkMatchesReference(t *testing.T) {
	r := Small(2, 16, 3)
	rng := rand.New(rand.NewPCG(2, 0))
	params := make([]float64, models.Size(r.TrunkParams()))
	models.Init(r.TrunkParams(), rng, params)
	for i := range params { // move BN scales and shifts off 1 and 0
		params[i] += 0.1 * rng.NormFloat64()
	}
	const batch, real = 4, 3
	x := randoms(rng, batch*3*16*16)
	weights := []float64{1.0 / real, 1.0 / real, 1.0 / real, 0}
	ref := newReference(r, params)

	t.Run("training", func(t *testing.T) {
		gr := newGraph(t, nil, r, tensor.Float64, x, batch, params, &models.Norm{}, weights)
		vm := gorgonia.NewTapeMachine(gr.g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		want, wantStats := ref.forward(x, batch, real, nil)
		compare(t, "features", floats(t, gr.features)[:real*r.Features()], want[:real*r.Features()])
		var got []float64
		for _, st := range gr.norm.Batch {
			got = append(got, st.Mean...)
			got = append(got, st.Variance...)
		}
		compare(t, "batch statistics", got, wantStats)
	})
	t.Run("evaluation", func(t *testing.T) {
		stats := r.TrunkStats()
		running := make([]float64, models.Size(stats))
		off := 0
		var nodes []*gorgonia.Node
		g := gorgonia.NewGraph()
		for _, p := range stats {
			v := running[off : off+p.Size()]
			for i := range v {
				v[i] = rng.NormFloat64()
				if strings.HasSuffix(p.Name, "running_var") {
					v[i] = 0.5 + rng.Float64()
				}
			}
			off += p.Size()
			nodes = append(nodes, gorgonia.NewTensor(g, tensor.Float64, 4, gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name),
				gorgonia.WithValue(dense(tensor.Float64, p.Shape, v))))
		}
		gr := newGraph(t, g, r, tensor.Float64, x, batch, params, &models.Norm{Running: nodes}, nil)
		vm := gorgonia.NewTapeMachine(gr.g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		want, _ := ref.forward(x, batch, real, running)
		compare(t, "features", floats(t, gr.features), want)
	})
}

func compare(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9*scale {
			t.Fatalf("%s[%d] = %.12g, reference %.12g", what, i, got[i], want[i])
		}
	}
}

// UpdateRunning follows PyTorch's formula, checked on numbers worked by
// hand: momentum 0.1, a layer of 2 channels over n = 5 values each, so the
// variance is made unbiased by 5/4.
func TestUpdateRunning(t *testing.T) {
	stats := models.StatParams("bn", 2)
	running := []float64{0, 1, 1, 1}    // means 0, 1; variances 1, 1
	batch := []float64{2, -1, 0.8, 0.4} // means 2, −1; biased variances 0.8, 0.4
	if err := models.UpdateRunning(running, batch, stats, []int{5}, 0.1); err != nil {
		t.Fatal(err)
	}
	// 0.9·0 + 0.1·2, 0.9·1 − 0.1, 0.9 + 0.1·0.8·5/4, 0.9 + 0.1·0.4·5/4
	want := []float64{0.2, 0.8, 1.0, 0.95}
	for i := range want {
		if math.Abs(running[i]-want[i]) > 1e-15 {
			t.Errorf("running[%d] = %v, want %v", i, running[i], want[i])
		}
	}
}
