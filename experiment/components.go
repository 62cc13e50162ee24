package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/particles"
)

// Components are parts of a run built in Go by the caller, in place of
// the registered ones a run's settings name: a model, or the update
// rules, of one's own, driven by the same loop, checkpoints and resume
// as the commands' runs (NewWith, RestoreWith). A part left nil is built
// from the settings as New builds it. The settings still give the rest
// (optimiser, schedule, batch, epochs, score scale, warm-up, seed), and
// their Model and Method are then only labels that the checkpoint
// records: a checkpoint holds no code, so a run with components of its
// own resumes only with the same components.
type Components struct {
	// Model is every particle's network: its input shape must be the
	// data's, and it must have one head per task (engine.Outputs gives
	// each head's width).
	Model models.Model
	// Trunk moves the trunks from every task's score, Head each task's
	// heads from that task's score (particles.Rule). Both or neither.
	Trunk, Head particles.Rule
	// Device, if not nil, runs the training graphs on a GPU
	// (engine.Config.Device); the rest of a step, evaluation and
	// checkpoints stay on the CPU, so a run moves between devices
	// through its checkpoints.
	Device gpu.Device
}

// method is the Method the settings are checked against when the rules
// are given: it allows every choice a kernel rule allows, as nothing is
// known of the rules but that they are particles.Rules (a rule that
// reads no kernel ignores the one the engine hands it).
func (c Components) method(name string) (*Method, error) {
	switch {
	case c.Trunk == nil && c.Head == nil:
		return nil, nil
	case c.Trunk == nil || c.Head == nil:
		return nil, errors.New("components: give both a trunk and a head rule, or neither")
	}
	return &Method{Name: name, Kernels: true}, nil
}

// model returns the given model after checking it against the data's
// input shape, or the settings' model.
func (c Components) model(s Settings, d data.Dataset) (models.Model, error) {
	if c.Model == nil {
		return s.model(d)
	}
	if in := c.Model.InputShape(); !slices.Equal(in, d.InputShape()) {
		return nil, fmt.Errorf("components: the model takes inputs of shape %v, %s has %v", in, d.Name(), d.InputShape())
	}
	return c.Model, nil
}

// readSettings is ReadSettings for a run with components c.
func readSettings(ck *checkpoints.Checkpoint, c Components) (Settings, error) {
	var s Settings
	if err := json.Unmarshal(ck.Settings, &s); err != nil {
		return s, fmt.Errorf("checkpoint settings: %w", err)
	}
	own, err := c.method(s.Method)
	if err != nil {
		return s, err
	}
	if err := s.check(own); err != nil {
		return s, fmt.Errorf("checkpoint settings: %w", err)
	}
	return s, nil
}
