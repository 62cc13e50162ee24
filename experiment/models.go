package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
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
	// them (the input shape, a task's kind, a setting such as Hidden).
	// For a method without a shared trunk it is called once per task.
	New func(inputShape []int, tasks []data.Task, s Settings) (models.Model, error)
}

// architectures is the registry of models. The built-ins, the paper's,
// are registered while the package's variables are initialised, in this
// order, before any model an init function registers (as methods are).
var architectures = newModels([]Model{
	{Name: "lenet", New: newLeNet},
	{Name: "mlp", New: newMLP},
	{Name: "resnet18", New: newResNet18("resnet18", resnet18.New)},
	{Name: "resnet18-cifar", New: newResNet18("resnet18-cifar", resnet18.Paper)},
})

// newModels returns a registry holding ms in their order.
func newModels(ms []Model) *registry.Registry[Model] {
	r := registry.New[Model]("model")
	for _, m := range ms {
		checkModel(m)
		r.Register(m.Name, m)
	}
	return r
}

// RegisterModel makes m available to Settings.Model and checkpoints,
// after the models registered before it. A model without a name or a
// constructor, or a name taken, is a programmer error and panics.
func RegisterModel(m Model) {
	checkModel(m)
	architectures.Register(m.Name, m)
}

// checkModel panics, naming m, if m has no constructor.
func checkModel(m Model) {
	if m.New == nil {
		panic(fmt.Sprintf("experiment: model %q has no constructor", m.Name))
	}
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

// ErrUnfit is wrapped by the error of a run whose model cannot take its
// data (the input shape, a task's kind) or settings: the command line
// asks for what cannot be built.
var ErrUnfit = errors.New("the model does not fit")

// unfit marks err as ErrUnfit without changing its message.
type unfit struct{ err error }

func (u unfit) Error() string        { return u.err.Error() }
func (u unfit) Unwrap() error        { return u.err }
func (u unfit) Is(target error) bool { return target == ErrUnfit }

// DefaultModel is the model for inputs of a shape, for a data set
// without a model of its own (the file data set): LeNet for 1×36×36
// images, ResNet-18 for 3×64×64, else the MLP, which flattens images.
func DefaultModel(shape []int) string {
	switch {
	case slices.Equal(shape, []int{1, lenet.Side, lenet.Side}):
		return "lenet"
	case slices.Equal(shape, []int{3, resnet18.Side, resnet18.Side}):
		return "resnet18"
	}
	return "mlp"
}

// ParseHidden reads Settings.Hidden: layer widths separated by commas.
func ParseHidden(spec string) ([]int, error) {
	var widths []int
	for _, f := range strings.Split(spec, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w < 1 || w > 1<<16 {
			return nil, fmt.Errorf("-hidden %q: widths are whole numbers from 1 to 65536 separated by commas", spec)
		}
		widths = append(widths, w)
	}
	return widths, nil
}

// noHidden refuses Settings.Hidden for a model without hidden layers to
// size.
func noHidden(model string, s Settings) error {
	if s.Hidden != "" {
		return fmt.Errorf("-hidden sizes the mlp's layers; the model is %s", model)
	}
	return nil
}

// newLeNet is the Multi-* LeNet: 1×36×36 images, classification heads.
func newLeNet(shape []int, tasks []data.Task, s Settings) (models.Model, error) {
	if err := noHidden("lenet", s); err != nil {
		return nil, err
	}
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

// newMLP is the SARCOS MLP: MLPHidden (or Settings.Hidden), any task
// kind; an image is read as the vector of its values.
func newMLP(shape []int, tasks []data.Task, s Settings) (models.Model, error) {
	in := 1
	for _, d := range shape {
		in *= d
	}
	if len(shape) == 0 || in < 1 {
		return nil, fmt.Errorf("mlp: inputs of shape %v", shape)
	}
	hidden := MLPHidden
	if s.Hidden != "" {
		var err error
		if hidden, err = ParseHidden(s.Hidden); err != nil {
			return nil, err
		}
	}
	out, err := outputs("mlp", tasks)
	if err != nil {
		return nil, err
	}
	return mlp.New(in, hidden, out...), nil
}

// newResNet18 is a CelebA ResNet-18 (package models/resnet18) called
// name, built by build: 3×64×64 images, classification heads.
// resnet18-cifar is the paper's trunk (resnet18.Paper), resnet18
// torchvision's layout (resnet18.New).
func newResNet18(name string, build func(classes ...int) *resnet18.ResNet) func([]int, []data.Task, Settings) (models.Model, error) {
	return func(shape []int, tasks []data.Task, s Settings) (models.Model, error) {
		if err := noHidden(name, s); err != nil {
			return nil, err
		}
		if !slices.Equal(shape, []int{3, resnet18.Side, resnet18.Side}) {
			return nil, fmt.Errorf("%s: inputs of shape %v, want 3×%d×%d images", name, shape, resnet18.Side, resnet18.Side)
		}
		if err := classification(name, tasks); err != nil {
			return nil, err
		}
		out, err := outputs(name, tasks)
		if err != nil {
			return nil, err
		}
		return build(out...), nil
	}
}
