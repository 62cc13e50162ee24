package experiment

import (
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
)

// Each model refuses, naming itself, inputs and tasks it cannot take;
// a method without a shared trunk refuses a model with batch statistics;
// an unknown model is refused with the list of those there are.
func TestModelsRefuse(t *testing.T) {
	class := []data.Task{{Name: "a", Kind: data.Classification, Classes: 2}, {Name: "b", Kind: data.Classification, Classes: 3}}
	regr := []data.Task{{Name: "r", Kind: data.Regression}}
	for _, tc := range []struct {
		model, method string
		d             shaped
		want          string // "" for none
	}{
		{"lenet", "mtsgd", shaped{class, []int{1, 36, 36}}, ""},
		{"lenet", "single", shaped{class, []int{1, 36, 36}}, ""},
		{"lenet", "mtsgd", shaped{class, []int{21}}, "lenet: inputs of shape [21], want 1×36×36 images"},
		{"lenet", "mtsgd", shaped{regr, []int{1, 36, 36}}, "lenet: task r is not a classification task"},
		{"mlp", "mtsgd", shaped{regr, []int{21}}, ""},
		{"mlp", "mtsgd", shaped{regr, []int{1, 36, 36}}, "mlp: inputs of shape [1 36 36], want a vector"},
		{"resnet18", "mtsgd", shaped{class, []int{3, 64, 64}}, ""},
		{"resnet18", "linear", shaped{regr, []int{3, 64, 64}}, "resnet18: task r is not a classification task"},
		{"resnet18", "single", shaped{class, []int{3, 64, 64}}, "-method single is not available with resnet18 (batch normalisation in independent networks)"},
		{"vgg", "mtsgd", shaped{class, []int{3, 64, 64}}, `model "vgg" is not one of lenet, mlp, resnet18`},
	} {
		s := Settings{Model: tc.model, Method: tc.method}
		_, err := s.model(tc.d)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s with %s on %v: %v", tc.model, tc.method, tc.d.shape, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s with %s on %v: error %v, want %q", tc.model, tc.method, tc.d.shape, err, tc.want)
		}
	}
}
