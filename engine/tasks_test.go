package engine

import (
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
)

// Every task kind says everything the engine asks of it, and a task of a
// kind without an entry is refused by name, not met with a panic.
func TestTaskKinds(t *testing.T) {
	for kind, k := range taskKinds {
		if k.outputs == nil || k.target == nil || k.encode == nil || k.loss == nil || k.predict == nil || k.score == nil {
			t.Errorf("task kind %v lacks a function: %+v", kind, k)
		}
	}
	for _, kind := range []data.Kind{data.Classification, data.Regression} {
		if _, ok := taskKinds[kind]; !ok {
			t.Errorf("no entry for %v", kind)
		}
	}
	cfg := testConfig(4, tensor.Float64)
	cfg.Tasks = []data.Task{{Name: "ranks", Kind: data.Kind(7)}}
	if _, err := NewParticle(cfg, nil); err == nil || !strings.Contains(err.Error(), "task ranks has kind Kind(7)") {
		t.Errorf("unknown kind: error %v", err)
	}
	if _, err := Outputs(cfg.Tasks[0]); err == nil {
		t.Error("Outputs of an unknown kind: no error")
	}
	if n, err := Outputs(data.Task{Name: "c", Kind: data.Classification, Classes: 4}); n != 4 || err != nil {
		t.Errorf("Outputs of four classes: %d, %v", n, err)
	}
}
