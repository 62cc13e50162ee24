package resnet18

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data/npz"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/ops"
)

// The paper's trunk at full width, by hand from the layout in the
// package doc (convolutions without bias; a batch norm has a scale and
// a shift per channel):
//
//	stem    3·64·3·3 = 1,728 + BN 128                                    =     1,856
//	layer1  2 × (2 · 64·64·9 + 2 BN of 128)                               =   147,968
//	layer2  64·128·9 + 128·128·9 + 2·256 + 64·128 + 256, + 2·128·128·9 + 512 = 525,568
//	layer3  128·256·9 + 256·256·9 + 2·512 + 128·256 + 512, + 2·256·256·9 + 1,024 = 2,099,712
//	layer4  256·512·9 + 512·512·9 + 2·1,024 + 256·512 + 1,024, + 2·512·512·9 + 2,048 = 8,393,728
//	trunk                                                                  11,168,832
//
// (torchvision's trunk, 11,176,512, less its 7×7 stem's 3·64·(49 − 9) =
// 7,680), and each head 2048·2 + 2 = 4,098: 11,332,752 with 40 heads.
// paper_fixture.npz records PyTorch's counts of the same network.
const (
	paperTrunkParams = 11_168_832
	paperHeadParams  = 4_098
)

func TestPaperParameterCount(t *testing.T) {
	classes := make([]int, 40)
	for j := range classes {
		classes[j] = 2
	}
	r := Paper(classes...)
	trunk, head := models.Size(r.TrunkParams()), models.Size(r.HeadParams(0))
	t.Logf("paper trunk: %d parameters, %d per head, %d with 40 heads", trunk, head, trunk+40*head)
	if trunk != paperTrunkParams || head != paperHeadParams {
		t.Errorf("%d trunk and %d head parameters, want %d and %d", trunk, head, paperTrunkParams, paperHeadParams)
	}
	if r.Features() != 2048 {
		t.Errorf("%d features, want 2,048", r.Features())
	}
	counts := readFixture(t)["full_counts"]
	if int(counts[0]) != trunk || int(counts[1]) != head {
		t.Errorf("PyTorch counts %v parameters, here %d and %d", counts, trunk, head)
	}
}

// readFixture reads every array of testdata/paper_fixture.npz, which
// testdata/paper_fixture.py wrote with PyTorch.
func readFixture(t *testing.T) map[string][]float64 {
	t.Helper()
	f, err := npz.Open(filepath.Join("testdata", "paper_fixture.npz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float64{}
	for _, name := range f.Names() {
		a, err := f.Array(name)
		if err != nil {
			t.Fatal(err)
		}
		n := 1
		for _, s := range a.Shape {
			n *= s
		}
		v := make([]float64, n)
		err = a.ReadFloat64(v)
		a.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = v
	}
	return out
}

// The Go trunk with PyTorch's weights (testdata/paper_fixture.py: width
// 4, 64×64 inputs, 4 images, 3 tasks of 2 classes) gives PyTorch's
// logits, gradients of the summed mean cross-entropies and updated
// running statistics, with batch norm in training mode as the training
// step runs it (every example of weight 1/4). Tolerances, relative to
// each array's largest magnitude: 1e-12 in float64 (PyTorch computed in
// float64 from the same values; only the order of sums differs: 1.2e-14
// seen), 1e-5 in float32 (rounding of about 6e-8 per operation through
// 17 layers and the batch norms' divisions: 1.6e-6 seen).
func TestPaperMatchesPyTorch(t *testing.T) {
	fx := readFixture(t)
	const batch, tasks = 4, 3
	r := PaperSmall(4, Side, 2, 2, 2)
	if got, want := models.Size(r.TrunkParams()), len(fx["trunk"]); got != want {
		t.Fatalf("%d trunk parameters here, %d in the fixture", got, want)
	}
	for _, tc := range []struct {
		dt  tensor.Dtype
		tol float64
	}{{tensor.Float64, 1e-12}, {tensor.Float32, 1e-5}} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			got := runPaper(t, r, fx, tc.dt, batch, tasks)
			for _, name := range []string{"logits", "trunk_grad", "head_grad", "running"} {
				d := maxScaledDiff(got[name], fx[name])
				t.Logf("%s: max |Go − PyTorch| = %.3g of the largest %.3g", name, d*maxAbs(fx[name]), maxAbs(fx[name]))
				if d > tc.tol {
					t.Errorf("%s differs from PyTorch's by %.3g of its largest value (tolerance %g)", name, d, tc.tol)
				}
			}
		})
	}
}

// runPaper runs the trunk and heads on the fixture's batch in dt and
// returns what the fixture holds from PyTorch.
func runPaper(t *testing.T, r *ResNet, fx map[string][]float64, dt tensor.Dtype, batch, tasks int) map[string][]float64 {
	t.Helper()
	weights := []float64{0.25, 0.25, 0.25, 0.25}
	gr := newGraph(t, nil, r, dt, fx["x"], batch, fx["trunk"], &models.Norm{}, weights)
	g := gr.g
	var wrt []*gorgonia.Node
	for _, p := range r.TrunkParams() {
		n := g.ByName(p.Name)
		if len(n) != 1 {
			t.Fatalf("%d nodes named %s", len(n), p.Name)
		}
		wrt = append(wrt, n[0])
	}
	heads := fx["heads"]
	var loss *gorgonia.Node
	var logits []*gorgonia.Node
	for j := range tasks {
		var hp []*gorgonia.Node
		for _, p := range r.HeadParams(j) {
			n := gorgonia.NewTensor(g, dt, len(p.Shape), gorgonia.WithShape(p.Shape...), gorgonia.WithName(p.Name), gorgonia.WithValue(dense(dt, p.Shape, heads[:p.Size()])))
			heads = heads[p.Size():]
			hp = append(hp, n)
		}
		wrt = append(wrt, hp...)
		z, err := r.Head(gr.features, j, hp)
		if err != nil {
			t.Fatal(err)
		}
		onehot := make([]float64, batch*2)
		for i := range batch {
			onehot[i*2+int(fx["labels"][j*batch+i])] = 1
		}
		y := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(batch, 2), gorgonia.WithName(fmt.Sprintf("y%d", j)), gorgonia.WithValue(dense(dt, []int{batch, 2}, onehot)))
		l, err := ops.SoftmaxCrossEntropy(z, y, gr.norm.Weight)
		if err != nil {
			t.Fatal(err)
		}
		if loss == nil {
			loss = l
		} else if loss, err = gorgonia.Add(loss, l); err != nil {
			t.Fatal(err)
		}
		logits = append(logits, z)
	}
	grads, err := gorgonia.Grad(loss, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, z := range logits {
		out["logits"] = append(out["logits"], floats(t, z)...)
	}
	nTrunk := len(r.TrunkParams())
	for i, gn := range grads {
		name := "trunk_grad"
		if i >= nTrunk {
			name = "head_grad"
		}
		out[name] = append(out[name], floats(t, gn)...)
	}
	stats := r.TrunkStats()
	running := make([]float64, models.Size(stats))
	models.Init(stats, nil, running)
	var batchStats []float64
	counts := make([]int, len(gr.norm.Spatial))
	for l, st := range gr.norm.Batch {
		batchStats = append(append(batchStats, st.Mean...), st.Variance...)
		counts[l] = batch * gr.norm.Spatial[l]
	}
	if err := models.UpdateRunning(running, batchStats, stats, counts, models.BatchNormMomentum); err != nil {
		t.Fatal(err)
	}
	out["running"] = running
	return out
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// maxScaledDiff is the largest |got − want| over want's largest
// magnitude; +Inf when the lengths differ.
func maxScaledDiff(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range got {
		d = max(d, math.Abs(got[i]-want[i]))
	}
	return d / maxAbs(want)
}

// Paper's initialisation is PyTorch's default, which multi_faces_resnet.py
// keeps: each convolution and head weight and head bias uniform on
// ±1/√fan_in (fan_in = in_channels·k·k, or the head's 2,048 features at
// full width), so every value lies within its bound and the largest of
// thousands comes near it; batch norms start at scale 1, shift 0.
func TestPaperInitialisation(t *testing.T) {
	r := PaperSmall(8, 32, 2)
	ps := append(r.TrunkParams(), r.HeadParams(0)...)
	vals := make([]float64, models.Size(ps))
	models.Init(ps, rand.New(rand.NewPCG(3, 0)), vals)
	for _, p := range ps {
		v := vals[:p.Size()]
		vals = vals[p.Size():]
		var want float64
		switch {
		case strings.HasSuffix(p.Name, ".bias") && strings.HasPrefix(p.Name, "head"):
			want = 1 / math.Sqrt(float64(r.Features()))
		case strings.HasPrefix(p.Name, "head"):
			want = 1 / math.Sqrt(float64(p.Shape[0]))
		case len(p.Shape) == 4 && p.Shape[0] > 1: // a convolution (out, in, k, k)
			want = 1 / math.Sqrt(float64(p.Shape[1]*p.Shape[2]*p.Shape[3]))
		default: // a batch norm's scale or shift
			c := 0.0
			if strings.HasSuffix(p.Name, ".weight") {
				c = 1
			}
			for _, x := range v {
				if x != c {
					t.Fatalf("%s: %v, want %v", p.Name, x, c)
				}
			}
			continue
		}
		m := maxAbs(v)
		if m > want || (len(v) >= 100 && m < 0.9*want) {
			t.Errorf("%s (%d values): largest magnitude %.4g, bound %.4g", p.Name, len(v), m, want)
		}
	}
}
