package experiment

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/lenet"
	"github.com/mtsgd/mtsgd/models/mlp"
	"github.com/mtsgd/mtsgd/particles"
)

// A run with components built by the caller, under a method name no
// registry knows, resumes with the same components exactly as it would
// have continued; without them, or with a model of another layout, the
// checkpoint is refused by name.
func TestComponentsResume(t *testing.T) {
	parts := Components{Model: lenet.New(10, 10), Trunk: &particles.MGDA{}, Head: &particles.Linear{}}
	settings := func(epochs int) Settings {
		s := testSettings(epochs)
		s.Model, s.Method = "my-lenet", "my-mgda"
		return s
	}
	data := Data{Train: train, Test: test}
	straight := t.TempDir()
	r, err := NewWith(settings(2), data, parts, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = straight
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	want, err := r.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}

	stopped := t.TempDir()
	if r, err = NewWith(settings(1), data, parts, 2); err != nil {
		t.Fatal(err)
	}
	r.Out = stopped
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := checkpoints.Load(filepath.Join(stopped, "last"))
	if err != nil {
		t.Fatal(err)
	}
	if r, err = RestoreWith(c, data, parts, 2); err != nil {
		t.Fatal(err)
	}
	r.Out, r.Settings.Epochs = stopped, 2
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := r.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if got.Step != want.Step || !reflect.DeepEqual(got.Particles, want.Particles) {
		t.Errorf("resumed with the components: step %d, parameters and optimiser states equal %v; want step %d and equal",
			got.Step, reflect.DeepEqual(got.Particles, want.Particles), want.Step)
	}

	if _, err := Restore(c, data, 1); err == nil || !strings.Contains(err.Error(), `method "my-mgda" is not one of`) {
		t.Errorf("restored without the components: %v", err)
	}
	other := parts
	other.Model = renamed{lenet.New(10, 10)}
	if _, err := RestoreWith(c, data, other, 1); err == nil || !strings.Contains(err.Error(), "checkpoint does not fit the model my-lenet") {
		t.Errorf("restored with another model: %v", err)
	}
}

// renamed is a model whose first trunk tensor has another name.
type renamed struct{ models.Model }

func (r renamed) TrunkParams() []models.Param {
	ps := slices.Clone(r.Model.TrunkParams())
	ps[0].Name = "renamed"
	return ps
}

// Components are checked before anything is built.
func TestComponentsRefused(t *testing.T) {
	data := Data{Train: train, Test: test}
	for _, tc := range []struct {
		parts Components
		want  string
	}{
		{Components{Trunk: &particles.Linear{}}, "components: give both a trunk and a head rule, or neither"},
		{Components{Head: &particles.Linear{}}, "components: give both a trunk and a head rule, or neither"},
		{Components{Model: mlp.New(21, []int{8}, 10, 10)}, "components: the model takes inputs of shape [21], train has [1 36 36]"},
	} {
		if _, err := NewWith(testSettings(1), data, tc.parts, 1); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %q", tc.parts, err, tc.want)
		}
	}
}
