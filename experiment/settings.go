// Package experiment runs network training as the commands do: it turns
// the settings of a run into data, an ensemble and its update rules, runs
// the epochs with evaluation after each, and saves and restores the whole
// state through package checkpoints so that a run can be resumed exactly
// and evaluated later (cmd/train, cmd/eval).
package experiment

import (
	"errors"
	"fmt"
	"time"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/multimnist"
	"github.com/mtsgd/mtsgd/data/sarcos"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/lenet"
	"github.com/mtsgd/mtsgd/models/mlp"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/network"
)

// Settings define a run: a checkpoint records them, and they rebuild the
// same data, model and updates.
type Settings struct {
	Dataset       string  `json:"dataset"`
	Model         string  `json:"model"`
	Method        string  `json:"method"`
	Particles     int     `json:"particles"`
	Epochs        int     `json:"epochs"`
	Batch         int     `json:"batch"`
	LR            float64 `json:"lr"`
	Optimizer     string  `json:"optimizer"`
	Momentum      float64 `json:"momentum"`
	Schedule      string  `json:"lr_schedule"`
	Milestones    string  `json:"lr_milestones"`
	Gamma         float64 `json:"lr_gamma"`
	Every         int     `json:"lr_every"`
	Warmup        int     `json:"warmup"`
	KernelScale   float64 `json:"kernel_scale"`
	Repulsion     float64 `json:"repulsion"`
	HeadRepulsion float64 `json:"head_repulsion"`
	Seed          uint64  `json:"seed"`
	TrainLimit    int     `json:"train_limit"`
	TestLimit     int     `json:"test_limit"`
	Dtype         string  `json:"dtype"`
}

// Check reports the first setting that cannot make a run.
func (s Settings) Check() error {
	switch {
	case s.Particles < 1:
		return fmt.Errorf("-particles must be at least 1, got %d", s.Particles)
	case !(s.LR > 0):
		return fmt.Errorf("-lr must be positive, got %v", s.LR)
	case s.Optimizer != "adam" && s.Optimizer != "sgd":
		return fmt.Errorf("-optimizer must be adam or sgd, got %q", s.Optimizer)
	case s.Momentum < 0 || s.Momentum >= 1:
		return fmt.Errorf("-momentum must be in [0, 1), got %v", s.Momentum)
	case !(s.KernelScale > 0):
		return fmt.Errorf("-kernel-scale must be positive, got %v", s.KernelScale)
	case s.Repulsion < 0:
		return fmt.Errorf("-repulsion must be non-negative, got %v", s.Repulsion)
	case s.HeadRepulsion < 0:
		return fmt.Errorf("-head-repulsion must be non-negative, got %v", s.HeadRepulsion)
	case s.Epochs < 1:
		return fmt.Errorf("-epochs must be at least 1, got %d", s.Epochs)
	case s.Batch < 1:
		return fmt.Errorf("-batch must be at least 1, got %d", s.Batch)
	case s.TrainLimit < 0 || s.TestLimit < 0:
		return errors.New("-train-limit and -test-limit must be 0 (all) or positive")
	case s.Warmup < 0:
		return fmt.Errorf("-warmup must be 0 or more epochs, got %d", s.Warmup)
	case !(s.Gamma > 0):
		return fmt.Errorf("-lr-gamma must be positive, got %v", s.Gamma)
	case s.Every < 1:
		return fmt.Errorf("-lr-every must be at least 1, got %d", s.Every)
	case s.Dtype != "float32" && s.Dtype != "float64":
		return fmt.Errorf("-dtype must be float32 or float64, got %q", s.Dtype)
	}
	if _, err := s.LRSchedule(); err != nil {
		return err
	}
	return nil
}

// NewOptimizer returns a fresh optimiser as the settings describe.
func (s Settings) NewOptimizer() optim.Optimizer {
	if s.Optimizer == "sgd" {
		return &optim.SGD{LR: s.LR, Momentum: s.Momentum}
	}
	return optim.NewAdam(s.LR)
}

// LRSchedule is the learning-rate schedule the settings describe.
func (s Settings) LRSchedule() (optim.Schedule, error) {
	switch s.Schedule {
	case "constant":
		return optim.Constant(s.LR), nil
	case "exponential":
		return optim.Exponential{Base: s.LR, Gamma: s.Gamma, Every: s.Every}, nil
	case "multistep":
		ms, err := optim.ParseMilestones(s.Milestones)
		if err != nil {
			return nil, fmt.Errorf("-lr-milestones: %w", err)
		}
		return optim.MultiStep{Base: s.LR, Milestones: ms, Gamma: s.Gamma}, nil
	}
	return nil, fmt.Errorf("-lr-schedule must be multistep, exponential or constant, got %q", s.Schedule)
}

// Rules returns the trunks' rule (the method) and the heads' (svgd).
func (s Settings) Rules() (trunk, head particles.Rule, err error) {
	if trunk, err = particles.New(s.Method, particles.Config{Kernel: particles.RBF{Scale: s.KernelScale}, Repulsion: s.Repulsion}); err != nil {
		return nil, nil, err
	}
	head, err = particles.New("svgd", particles.Config{Kernel: particles.RBF{Scale: s.KernelScale}, Repulsion: s.HeadRepulsion})
	return trunk, head, err
}

// Datasets lists the data sets networks train on.
func Datasets() []string { return append(multimnist.Names(), sarcos.Name) }

// DefaultModel is the model the paper trains on a data set.
func DefaultModel(dataset string) string {
	if dataset == sarcos.Name {
		return "mlp"
	}
	return "lenet"
}

// Data are a run's data sets. Valid is nil for data sets without a
// validation split (Multi-MNIST); with one (SARCOS), it selects the best
// checkpoint.
type Data struct {
	Train, Valid, Test data.Dataset
}

// LoadData reads or builds the full data sets of s.Dataset from dataDir
// (see data.Dir); Run applies the settings' limits.
func LoadData(s Settings, dataDir string) (Data, time.Duration, error) {
	dir, err := data.Dir(dataDir)
	if err != nil {
		return Data{}, 0, err
	}
	start := time.Now()
	if s.Dataset == sarcos.Name {
		sp, err := sarcos.Load(dir)
		if err != nil {
			return Data{}, 0, err
		}
		return Data{Train: sp.Train, Valid: sp.Valid, Test: sp.Test}, time.Since(start), nil
	}
	v, ok := multimnist.Lookup(s.Dataset)
	if !ok {
		return Data{}, 0, fmt.Errorf("data set %q is not one of %v", s.Dataset, Datasets())
	}
	tr, te, err := v.Load(dir, s.Seed)
	if err != nil {
		return Data{}, 0, err
	}
	return Data{Train: tr, Test: te}, time.Since(start), nil
}

// model builds the network the settings name for a data set.
func (s Settings) model(d data.Dataset) (models.Model, error) {
	tasks := d.Tasks()
	outputs := make([]int, len(tasks))
	for j, t := range tasks {
		outputs[j] = 1
		if t.Kind == data.Classification {
			outputs[j] = t.Classes
		}
	}
	switch s.Model {
	case "lenet":
		for _, t := range tasks {
			if t.Kind != data.Classification {
				return nil, fmt.Errorf("lenet: task %s is not a classification task", t.Name)
			}
		}
		return lenet.New(outputs...), nil
	case "mlp":
		shape := d.InputShape()
		if len(shape) != 1 {
			return nil, fmt.Errorf("mlp: inputs of shape %v, want a vector", shape)
		}
		return mlp.New(shape[0], MLPHidden, outputs...), nil
	}
	return nil, fmt.Errorf("model %q is not one of lenet, mlp", s.Model)
}

// MLPHidden are the hidden layer widths of the paper's SARCOS MLP.
var MLPHidden = []int{256, 256, 256}

// networkConfig is the ensemble configuration for the settings and a data
// set.
func (s Settings) networkConfig(d data.Dataset) (*network.Config, error) {
	m, err := s.model(d)
	if err != nil {
		return nil, err
	}
	dt := tensor.Float32
	if s.Dtype == "float64" {
		dt = tensor.Float64
	}
	return &network.Config{Model: m, Tasks: d.Tasks(), Batch: s.Batch, Dtype: dt}, nil
}
