package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/metrics"
)

// ReadSettings returns the settings recorded in a checkpoint, to load the
// data it needs before Restore.
func ReadSettings(c *checkpoints.Checkpoint) (Settings, error) {
	return readSettings(c, Components{})
}

// Open loads the checkpoint in dir (or, if dir is a run's directory, in
// dir/last), builds the data sets its settings name from dataDir, and
// restores the run. It returns the checkpoint directory it read.
func Open(dir, dataDir string, workers int) (*Run, string, error) {
	return OpenWith(dir, dataDir, Components{}, workers)
}

// OpenWith is Open with the components of RestoreWith.
func OpenWith(dir, dataDir string, parts Components, workers int) (*Run, string, error) {
	return OpenFiles(dir, dataDir, "", parts, workers)
}

// OpenFiles is OpenWith for a run on the file data set whose directory
// has moved: filesDir, if not "", is read in place of the directory the
// checkpoint records. The files' content hashes (files.Spec.SHA256)
// decide whether it holds the data the run was trained on.
func OpenFiles(dir, dataDir, filesDir string, parts Components, workers int) (*Run, string, error) {
	dir = checkpoints.Locate(dir)
	c, err := checkpoints.Load(dir)
	if err != nil {
		return nil, dir, err
	}
	// The data set first: the other settings are judged by it.
	var named struct{ Dataset string }
	if err := json.Unmarshal(c.Settings, &named); err == nil {
		if _, ok := datasets.Lookup(named.Dataset); !ok {
			return nil, dir, fmt.Errorf("%s: checkpoint settings: data set %q is not one of %s", dir, named.Dataset, strings.Join(Datasets(), ", "))
		}
	}
	s, err := ReadSettings(c)
	if err != nil {
		return nil, dir, fmt.Errorf("%s: %w", dir, err)
	}
	if err := s.moveFiles(filesDir); err != nil {
		return nil, dir, fmt.Errorf("%s: %w", dir, err)
	}
	d, _, err := LoadData(s, dataDir)
	if err != nil && filesDir == "" && s.Files != nil {
		if _, serr := os.Stat(s.Files.Dir); errors.Is(serr, os.ErrNotExist) {
			return nil, dir, fmt.Errorf("%w: %s: the run's data directory %s is not there; if it has moved, name it with -data DIR", data.ErrMissing, dir, s.Files.Dir)
		}
	}
	var bad *data.SettingError
	if errors.As(err, &bad) {
		return nil, dir, fmt.Errorf("%s: checkpoint settings: %s is %d, which %s", dir, bad.Setting, bad.Value, bad.Reason)
	}
	if err != nil {
		return nil, dir, err
	}
	// RestoreWith reads the settings again, with the directory the
	// checkpoint records; the data loaded from filesDir replace it
	// (Data.Record).
	r, err := RestoreWith(c, d, parts, workers)
	if err != nil {
		return nil, dir, fmt.Errorf("%s: %w", dir, err)
	}
	return r, dir, nil
}

// moveFiles points the settings of a run on the file data set at
// filesDir, if not "", in place of the directory they record.
func (s *Settings) moveFiles(filesDir string) error {
	if filesDir == "" {
		return nil
	}
	if s.Dataset != files.Name || s.Files == nil {
		return fmt.Errorf("-data %s names the directory of a run on your own files; this run's data set is %s", filesDir, s.Dataset)
	}
	abs, err := filepath.Abs(filesDir)
	if err != nil {
		return fmt.Errorf("-data %s: %w", filesDir, err)
	}
	f := *s.Files
	f.Dir = abs
	s.Files = &f
	return nil
}

// Restore rebuilds the run a checkpoint recorded, with the data sets of
// its settings (LoadData), positioned to continue where it stopped.
func Restore(c *checkpoints.Checkpoint, d Data, workers int) (*Run, error) {
	return RestoreWith(c, d, Components{}, workers)
}

// RestoreWith is Restore for a run started by NewWith, given the same
// components; a model whose parameters do not fit the checkpoint's
// layout is refused.
func RestoreWith(c *checkpoints.Checkpoint, d Data, comps Components, workers int) (*Run, error) {
	s, err := readSettings(c, comps)
	if err != nil {
		return nil, err
	}
	r, err := NewWith(s, d, comps, workers)
	if errors.Is(err, sysmem.ErrTooBig) {
		return nil, fmt.Errorf("checkpoint settings: %w", err)
	}
	if err != nil {
		return nil, err
	}
	if err := layout(r.Trainer.Config()).Equal(c.Layout); err != nil {
		return nil, fmt.Errorf("checkpoint does not fit the model %s: %w", s.Model, err)
	}
	if len(c.Particles) != len(r.Trainer.Particles) {
		return nil, fmt.Errorf("checkpoint has %d particles, its settings say %d", len(c.Particles), len(r.Trainer.Particles))
	}
	for i, p := range r.Trainer.Particles {
		cp := c.Particles[i]
		copy(p.Trunk, cp.Trunk)
		for j := range p.Heads {
			copy(p.Heads[j], cp.Heads[j])
		}
		copy(p.Stats, cp.Stats)
		trunkOpt, headOpts := r.Trainer.Optimizers(i)
		if err := trunkOpt.SetState(cp.TrunkOpt, len(p.Trunk)); err != nil {
			return nil, fmt.Errorf("checkpoint particle %d trunk optimizer: %w", i, err)
		}
		for j, h := range headOpts {
			if err := h.SetState(cp.HeadOpts[j], len(p.Heads[j])); err != nil {
				return nil, fmt.Errorf("checkpoint particle %d head %d optimizer: %w", i, j, err)
			}
		}
	}
	var state runState
	if len(c.Metrics) > 0 {
		if err := json.Unmarshal(c.Metrics, &state); err != nil {
			return nil, fmt.Errorf("checkpoint metrics: %w", err)
		}
	}
	if err := r.checkPosition(c, state); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	r.epoch, r.batch, r.Trainer.Steps = c.Epoch, c.Batch, c.Step
	r.seconds, r.history, r.lossSum, r.particleLoss = state.Seconds, state.History, state.LossSum, state.ParticleLossSum
	if len(state.Temperatures) > 0 {
		if len(state.Temperatures) != len(r.TrainSet.Tasks()) {
			return nil, fmt.Errorf("checkpoint metrics: %d temperatures for %d tasks", len(state.Temperatures), len(r.TrainSet.Tasks()))
		}
		for j, t := range state.Temperatures {
			task := r.TrainSet.Tasks()[j]
			switch {
			case !(t >= metrics.MinTemperature && t <= metrics.MaxTemperature):
				return nil, fmt.Errorf("checkpoint metrics: temperature %v of task %d outside [%v, %v]", t, j, metrics.MinTemperature, metrics.MaxTemperature)
			case task.Kind == data.Regression && t != 1:
				// FitTemperatures gives a regression task 1: there is
				// nothing to scale.
				return nil, fmt.Errorf("checkpoint metrics: temperature %v of task %d (%s), a regression task, whose temperature is 1", t, j, task.Name)
			}
		}
		r.temperatures = state.Temperatures
	}
	r.ruleState = state.RuleState
	if state.CheckpointEvery < 0 {
		return nil, fmt.Errorf("checkpoint metrics: checkpoint_every %d is negative", state.CheckpointEvery)
	}
	r.CheckpointEvery = state.CheckpointEvery
	switch {
	case state.BestEpoch == nil:
		r.bestEpoch = -1
	case *state.BestEpoch < 0 || *state.BestEpoch > r.epoch:
		return nil, fmt.Errorf("checkpoint metrics: best epoch %d outside 0..%d", *state.BestEpoch, r.epoch)
	default:
		r.bestEpoch = *state.BestEpoch
	}
	return r, nil
}

// checkPosition refuses a checkpoint whose position and history do not
// fit the run's data: resuming would index past the epoch's batches, or
// carry on a history that no run of these settings wrote. A run at epoch
// e and batch b has made e·S + b steps (S batches an epoch) and holds one
// history line per split and task of each of its e epochs; b = S after an
// interruption during an epoch's evaluation.
func (r *Run) checkPosition(c *checkpoints.Checkpoint, state runState) error {
	steps, tasks := r.stepsPerEpoch(), len(r.TrainSet.Tasks())
	lines := tasks
	if r.ValidSet != nil {
		lines *= 2
	}
	switch {
	case c.Epoch < 0 || c.Batch < 0 || c.Step < 0:
		return fmt.Errorf("position epoch %d, batch %d, step %d: none may be negative", c.Epoch, c.Batch, c.Step)
	case c.Batch > steps:
		return fmt.Errorf("batch %d is past the %d batches of an epoch (%d training examples, batch size %d)",
			c.Batch, steps, r.TrainSet.Len(), r.Settings.Batch)
	case c.Step != batchesDone(c.Epoch, c.Batch, steps):
		return fmt.Errorf("step %d does not follow from epoch %d and batch %d of epochs of %d batches", c.Step, c.Epoch, c.Batch, steps)
	case lines == 0 || len(state.History)%lines != 0 || len(state.History)/lines != c.Epoch:
		return fmt.Errorf("metrics: %d history lines for %d epochs of %d lines (splits × tasks)", len(state.History), c.Epoch, lines)
	case state.Seconds < 0:
		return fmt.Errorf("metrics: %v seconds of training", state.Seconds)
	case c.Batch > 0 && len(state.LossSum) != tasks:
		return fmt.Errorf("metrics: %d running losses for %d tasks", len(state.LossSum), tasks)
	case state.ParticleLossSum != nil && len(state.ParticleLossSum) != tasks:
		return fmt.Errorf("metrics: per-particle running losses for %d tasks, want %d", len(state.ParticleLossSum), tasks)
	}
	for _, l := range state.ParticleLossSum {
		if len(l) != len(c.Particles) {
			return fmt.Errorf("metrics: running losses of %d particles, want %d", len(l), len(c.Particles))
		}
	}
	for _, l := range state.History {
		if l.Epoch < 1 || l.Epoch > c.Epoch {
			return fmt.Errorf("metrics: a history line of epoch %d, outside 1..%d", l.Epoch, c.Epoch)
		}
	}
	return nil
}

// batchesDone is e·s + b, the batches done by epoch e and batch b of
// epochs of s batches, or −1 where that overflows.
func batchesDone(e, b, s int) int {
	if s > 0 && e > (math.MaxInt-b)/s {
		return -1
	}
	return e*s + b
}
