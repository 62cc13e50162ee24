package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/internal/registry"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/lenet"
	"github.com/mtsgd/mtsgd/models/mlp"
	"github.com/mtsgd/mtsgd/models/resnet18"
)

// A Model is a network architecture, as Settings.Model names it (a data
// set's default, Dataset.Model).
type Model struct {
	Name string
	// New returns the network for inputs of the given shape with one
	// head per task, or an error naming the model when it cannot take
	// them (the input shape, a task's kind). For a method without a
	// shared trunk it is called once per task.
	New func(inputShape []int, tasks []data.Task) (models.Model, error)
}

var architectures = registry.New[Model]("model")

// RegisterModel makes m available to Settings.Model and checkpoints. A
// model without a name or a constructor, or a name taken, is a
// programmer error and panics.
func RegisterModel(m Model) {
	if m.New == nil {
		panic(fmt.Sprintf("experiment: model %q has no constructor", m.Name))
	}
	architectures.Register(m.Name, m)
}

// LookupModel returns the model called name.
func LookupModel(name string) (Model, error) {
	if m, ok := architectures.Lookup(name); ok {
		return m, nil
	}
	return Model{}, fmt.Errorf("model %q is not one of %s", name, strings.Join(architectures.Names(), ", "))
}

// ModelNames lists the registered models in the order they were
// registered.
func ModelNames() []string { return architectures.Names() }

// The built-in models, the paper's.
func init() {
	RegisterModel(Model{Name: "lenet", New: newLeNet})
	RegisterModel(Model{Name: "mlp", New: newMLP})
	RegisterModel(Model{Name: "resnet18", New: newResNet18})
}

// outputs is the width of each task's head (engine.Outputs) for model.
func outputs(model string, tasks []data.Task) ([]int, error) {
	out := make([]int, len(tasks))
	for j, t := range tasks {
		var err error
		if out[j], err = engine.Outputs(t); err != nil {
			return nil, fmt.Errorf("%s: %w", model, err)
		}
	}
	return out, nil
}

// classification refuses tasks that are not classification tasks, for a
// model whose heads end in softmax cross-entropy.
func classification(model string, tasks []data.Task) error {
	for _, t := range tasks {
		if t.Kind != data.Classification {
			return fmt.Errorf("%s: task %s is not a classification task", model, t.Name)
		}
	}
	return nil
}

// newLeNet is the Multi-* LeNet: 1×36×36 images, classification heads.
func newLeNet(shape []int, tasks []data.Task) (models.Model, error) {
	if !slices.Equal(shape, []int{1, lenet.Side, lenet.Side}) {
		return nil, fmt.Errorf("lenet: inputs of shape %v, want 1×%d×%d images", shape, lenet.Side, lenet.Side)
	}
	if err := classification("lenet", tasks); err != nil {
		return nil, err
	}
	out, err := outputs("lenet", tasks)
	if err != nil {
		return nil, err
	}
	return lenet.New(out...), nil
}

// MLPHidden are the hidden layer widths of the paper's SARCOS MLP.
var MLPHidden = []int{256, 256, 256}

// newMLP is the SARCOS MLP: vector inputs, MLPHidden, any task kind.
func newMLP(shape []int, tasks []data.Task) (models.Model, error) {
	if len(shape) != 1 {
		return nil, fmt.Errorf("mlp: inputs of shape %v, want a vector", shape)
	}
	out, err := outputs("mlp", tasks)
	if err != nil {
		return nil, err
	}
	return mlp.New(shape[0], MLPHidden, out...), nil
}

// newResNet18 is the CelebA ResNet-18: 3×64×64 images, classification
// heads.
func newResNet18(shape []int, tasks []data.Task) (models.Model, error) {
	if !slices.Equal(shape, []int{3, resnet18.Side, resnet18.Side}) {
		return nil, fmt.Errorf("resnet18: inputs of shape %v, want 3×%d×%d images", shape, resnet18.Side, resnet18.Side)
	}
	if err := classification("resnet18", tasks); err != nil {
		return nil, err
	}
	out, err := outputs("resnet18", tasks)
	if err != nil {
		return nil, err
	}
	return resnet18.New(out...), nil
}
