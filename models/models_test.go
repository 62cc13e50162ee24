package models_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/internal/modeltest"
	"github.com/mtsgd/mtsgd/models/mlp"
)

// Init fills each parameter's stretch of the flat vector with that
// parameter's own initialiser, in list order; Size counts the values.
func TestInitInOrder(t *testing.T) {
	ps := []models.Param{
		{Name: "a", Shape: []int{2, 3}, Init: models.Constant(1)},
		{Name: "b", Shape: []int{4}, Init: models.Constant(-2)},
		{Name: "c", Shape: []int{1, 1, 2}, Init: models.Uniform(0.5)},
	}
	if got := models.Size(ps); got != 12 {
		t.Fatalf("size %d, want 12", got)
	}
	v := make([]float64, 12)
	models.Init(ps, rand.New(rand.NewPCG(1, 1)), v)
	if !slices.Equal(v[:10], []float64{1, 1, 1, 1, 1, 1, -2, -2, -2, -2}) {
		t.Errorf("values %v, want six 1s then four −2s", v[:10])
	}
	for _, x := range v[10:] {
		if x == 0 || math.Abs(x) > 0.5 {
			t.Errorf("uniform values %v, want nonzero within ±0.5", v[10:])
		}
	}
}

// Independent networks: nothing shared, each task's "head" is a whole
// network, which computes exactly what that network computes alone.
func TestIndependent(t *testing.T) {
	nets := []models.Model{mlp.New(3, []int{4}, 2), mlp.New(3, []int{5, 2}, 1)}
	m := models.Independent{Nets: nets}
	if n := len(m.TrunkParams()); n != 0 {
		t.Fatalf("%d trunk parameters, want none", n)
	}
	if got, want := m.HeadParams(1)[0].Name, "task1.fc1.weight"; got != want {
		t.Errorf("first parameter of task 1 %q, want %q", got, want)
	}
	for j, net := range nets {
		if got, want := models.Size(m.HeadParams(j)), models.Size(net.TrunkParams())+models.Size(net.HeadParams(0)); got != want {
			t.Errorf("task %d: %d parameters, want its network's %d", j, got, want)
		}
	}

	const batch = 3
	x := []float64{0.1, -0.2, 0.3, 1, 2, -1, 0, 0.5, -0.5}
	p := modeltest.Init(m, 2, 3)
	got := modeltest.Forward(t, m, x, batch, p)
	if !slices.Equal(got.Features, x) {
		t.Errorf("features %v, want the input %v", got.Features, x)
	}
	for j, net := range nets {
		n := models.Size(net.TrunkParams())
		alone := modeltest.Forward(t, net, x, batch, modeltest.Params{Trunk: p.Heads[j][:n], Heads: [][]float64{p.Heads[j][n:]}})
		if !slices.Equal(got.Heads[j], alone.Heads[0]) {
			t.Errorf("task %d: %v, want the network's own %v", j, got.Heads[j], alone.Heads[0])
		}
	}
}
