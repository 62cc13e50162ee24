package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/particles"
)

// flushBest writes the best epoch kept in memory to best/. After a
// failure best/'s epoch is unknown (-1: the history decides).
func (r *Run) flushBest() error {
	c := r.pendingBest
	r.pendingBest = nil
	dir := filepath.Join(r.Out, "best")
	if err := checkpoints.Save(dir, c); err != nil {
		r.bestEpoch = -1
		return err
	}
	if r.Hooks.Saved != nil {
		r.Hooks.Saved(dir)
	}
	return nil
}

// cloneCheckpoint copies c's values, which alias the particles' and
// optimisers' own, so that training on does not change them.
func cloneCheckpoint(c *checkpoints.Checkpoint) *checkpoints.Checkpoint {
	d := *c
	d.Particles = make([]checkpoints.Particle, len(c.Particles))
	for i, p := range c.Particles {
		d.Particles[i] = checkpoints.Particle{Trunk: slices.Clone(p.Trunk), Stats: slices.Clone(p.Stats), TrunkOpt: slices.Clone(p.TrunkOpt)}
		for _, h := range p.Heads {
			d.Particles[i].Heads = append(d.Particles[i].Heads, slices.Clone(h))
		}
		for _, h := range p.HeadOpts {
			d.Particles[i].HeadOpts = append(d.Particles[i].HeadOpts, slices.Clone(h))
		}
	}
	return &d
}

func (r *Run) save(name string) error {
	if name == "last" && r.pendingBest != nil {
		// last/ records best/'s epoch: best/ must hold it first.
		if err := r.flushBest(); err != nil {
			return err
		}
	}
	c, err := r.Checkpoint()
	if err != nil {
		return err
	}
	dir := filepath.Join(r.Out, name)
	if err := checkpoints.Save(dir, c); err != nil {
		return err
	}
	if r.Hooks.Saved != nil {
		r.Hooks.Saved(dir)
	}
	return nil
}

// saveBest saves the state as best/ and records the epoch as best/'s
// only if that succeeds.
func (r *Run) saveBest() error {
	prev := r.bestEpoch
	r.bestEpoch = r.epoch // the state best/ holds says it is the best
	if err := r.save("best"); err != nil {
		r.bestEpoch = prev
		return err
	}
	return nil
}

// saveVerified saves last/ and loads it back, so that a caller told the
// state is saved can count on resuming from it.
func (r *Run) saveVerified() error {
	dir := filepath.Join(r.Out, "last")
	if err := r.save("last"); err != nil {
		return err
	}
	c, err := checkpoints.Load(dir)
	if err != nil {
		return fmt.Errorf("%s was saved but does not load back: %w", dir, err)
	}
	if c.Epoch != r.epoch || c.Batch != r.batch || c.Step != r.Trainer.Steps {
		return fmt.Errorf("%s was saved but loads back at epoch %d batch %d step %d, not %d, %d, %d",
			dir, c.Epoch, c.Batch, c.Step, r.epoch, r.batch, r.Trainer.Steps)
	}
	return nil
}

// lastGood says which checkpoint of Out is the last one that loads, after
// a failed save: last/ keeps its previous checkpoint whatever happens
// while it is written (package checkpoints), else best/ may have one.
func (r *Run) lastGood() string {
	var problems []string
	for _, name := range []string{"last", "best"} {
		dir := filepath.Join(r.Out, name)
		c, err := checkpoints.Load(dir)
		if err == nil {
			return fmt.Sprintf("the last good checkpoint is %s (epoch %d, batch %d, step %d)", dir, c.Epoch, c.Batch, c.Step)
		}
		if !errors.Is(err, os.ErrNotExist) {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Sprintf("%s holds no good checkpoint (%s)", r.Out, strings.Join(problems, "; "))
	}
	return fmt.Sprintf("%s holds no checkpoint yet", r.Out)
}

// runState is what a checkpoint's metrics field holds for a run.
type runState struct {
	Seconds float64   `json:"seconds"`
	LossSum []float64 `json:"loss_sum"` // the current epoch's, so far
	// ParticleLossSum is the current epoch's per-particle task losses so
	// far ([task][particle]); absent from checkpoints written before it
	// was recorded.
	ParticleLossSum [][]float64   `json:"particle_loss_sum,omitempty"`
	History         []MetricsLine `json:"history"`
	// BestEpoch is the epoch whose state best/ holds, 0 for none; absent
	// from checkpoints written before it was recorded.
	BestEpoch *int `json:"best_epoch,omitempty"`
	// Temperatures are the per-task temperatures fitted on the
	// validation split at the checkpoint's last evaluation; absent
	// without a validation split, and from checkpoints written before
	// they were recorded.
	Temperatures []float64 `json:"temperatures,omitempty"`
	// RuleState is the trunk rule's state (particles.StatefulRule: a
	// loss weighting's task weights, say); absent for a rule without.
	RuleState []float64 `json:"rule_state,omitempty"`
	// CheckpointEvery is the run's Run.CheckpointEvery, which a resumed
	// run keeps unless told otherwise; absent for 0.
	CheckpointEvery int `json:"checkpoint_every,omitempty"`
}

// Checkpoint captures the run's state.
func (r *Run) Checkpoint() (*checkpoints.Checkpoint, error) {
	if err := r.Trainer.Sync(); err != nil {
		return nil, err
	}
	settings, err := json.Marshal(r.Settings)
	if err != nil {
		return nil, err
	}
	st := runState{Seconds: r.seconds, LossSum: r.lossSum, ParticleLossSum: r.particleLoss, History: r.history, Temperatures: r.temperatures,
		CheckpointEvery: r.CheckpointEvery}
	if r.bestEpoch >= 0 {
		st.BestEpoch = &r.bestEpoch
	}
	st.RuleState = r.ruleState
	if s, ok := r.trunkRule.(particles.StatefulRule); ok && s.Stateful() {
		st.RuleState = s.State()
	}
	state, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	c := &checkpoints.Checkpoint{
		Settings: settings, Epoch: r.epoch, Batch: r.batch, Step: r.Trainer.Steps,
		Metrics: state, Layout: layout(r.Trainer.Config()),
	}
	for i, p := range r.Trainer.Particles {
		trunkOpt, headOpts := r.Trainer.Optimizers(i)
		cp := checkpoints.Particle{Trunk: p.Trunk, Heads: p.Heads, Stats: p.Stats, TrunkOpt: trunkOpt.State()}
		for _, h := range headOpts {
			cp.HeadOpts = append(cp.HeadOpts, h.State())
		}
		c.Particles = append(c.Particles, cp)
	}
	return c, nil
}

// layout is the checkpoint layout of the ensemble's model.
func layout(cfg *engine.Config) checkpoints.Layout {
	tensors := func(ps []models.Param) []checkpoints.Tensor {
		var ts []checkpoints.Tensor
		for _, p := range ps {
			ts = append(ts, checkpoints.Tensor{Name: p.Name, Shape: p.Shape})
		}
		return ts
	}
	l := checkpoints.Layout{Trunk: tensors(cfg.Model.TrunkParams()), Stats: tensors(cfg.Model.TrunkStats())}
	for j := range cfg.Tasks {
		l.Heads = append(l.Heads, tensors(cfg.Model.HeadParams(j)))
	}
	return l
}
