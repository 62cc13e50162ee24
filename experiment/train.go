package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/aggregate"
)

// Train runs the remaining epochs, evaluating on the test set after each,
// writing Out/metrics.jsonl and the checkpoints: Out/last after every
// epoch, Out/best after one that beats the epoch best/ holds. When ctx
// ends it saves Out/last at the current step, loads it back, and returns
// ErrInterrupted, or an error wrapping ErrUnsaved if either failed. Every
// failed save ends training with an error.
func (r *Run) Train(ctx context.Context) error {
	p, err := r.prepare()
	if err != nil {
		return err
	}
	for r.epoch < r.Settings.Epochs {
		if err := r.trainEpoch(ctx, p); err != nil {
			return markDiverged(err)
		}
	}
	return r.syncMetrics()
}

// markDiverged marks err as a divergence if a NaN or Inf caused it, or a
// method whose direction the gradients left undefined
// (aggregate.ErrUndefined), and it is not marked yet. On a device a
// step's directions are checked after the optimisers moved along them
// (engine's Trainer.Sync), so the failure
// may come from what reads the parameters next (the evaluation, a
// checkpoint's save) rather than from the step: none of those then
// saves anything.
func markDiverged(err error) error {
	nf := (*engine.NotFiniteError)(nil)
	if (errors.As(err, &nf) || errors.Is(err, aggregate.ErrUndefined)) && !errors.Is(err, ErrDiverged) {
		return diverged{err}
	}
	return err
}

// rules are what every epoch's update is made of.
type rules struct {
	trunk, head particles.Rule
	schedule    optim.Schedule
	scale       engine.ScoreScale
	space       engine.KernelSpace
}

// prepare reads the settings into the update's rules and brings the run
// directory up to date with the checkpoint: best/ where a failed save
// left it behind, metrics.jsonl where it differs from the history.
func (r *Run) prepare() (rules, error) {
	var p rules
	var err error
	if p.trunk, p.head, err = r.updateRules(); err != nil {
		return p, err
	}
	if p.schedule, err = r.Settings.LRSchedule(); err != nil {
		return p, err
	}
	p.scale, p.space = r.Settings.ScoreScale.Engine(), r.Settings.KernelOn.Engine()
	if err := os.MkdirAll(r.Out, 0o755); err != nil {
		return p, fmt.Errorf("creating output directory: %w", err)
	}
	// A run that stopped after saving an epoch's last/ but not its
	// best/ (a failed save) resumes at that epoch's end: write best/ now.
	if r.batch == 0 && r.epoch > 0 && r.bestEpoch >= 0 && r.bestEpoch < r.epoch && r.improves(r.epochLines(r.epoch)) {
		if err := r.saveBest(); err != nil {
			return p, err
		}
	}
	r.lastSave = time.Now() // SaveEvery counts from the start
	// metrics.jsonl is a view of the checkpoint's history: one whose
	// write failed, or that was edited, is rebuilt now, not only after
	// the next epoch (which a finished run does not have).
	return p, r.syncMetrics()
}

// updateRules returns the rules that move the trunks and the heads,
// making them on first use (the caller's Components, else the settings'
// method) and giving the trunk rule the state a restored checkpoint
// held.
func (r *Run) updateRules() (trunk, head particles.Rule, err error) {
	if r.trunkRule != nil {
		return r.trunkRule, r.headRule, nil
	}
	trunk, head = r.parts.Trunk, r.parts.Head
	if trunk == nil {
		if trunk, head, err = r.Settings.Rules(len(r.TrainSet.Tasks()), r.stepsPerEpoch()); err != nil {
			return nil, nil, err
		}
	}
	if s, ok := trunk.(particles.StatefulRule); ok && s.Stateful() {
		if r.ruleState != nil {
			if err := s.SetState(r.ruleState); err != nil {
				return nil, nil, fmt.Errorf("checkpoint's rule state: %w", err)
			}
		}
	} else if len(r.ruleState) > 0 {
		return nil, nil, fmt.Errorf("checkpoint holds %d values of rule state; method %s keeps none", len(r.ruleState), r.Settings.Method)
	}
	r.trunkRule, r.headRule, r.ruleState = trunk, head, nil
	return trunk, head, nil
}

// trainEpoch runs the current epoch's remaining steps, then evaluates
// the epoch and saves it.
func (r *Run) trainEpoch(ctx context.Context, p rules) error {
	lr := p.schedule.LR(r.epoch)
	r.Trainer.SetLR(lr)
	u := engine.Update{
		Trunk: p.trunk, Head: p.head, Scale: p.scale, Examples: r.TrainSet.Len(),
		Kernel: p.space, OutputKernel: particles.RBF{Scale: r.Settings.KernelScale}, HeadsFirst: r.Settings.Order.HeadsFirst(),
	}
	warmup := r.epoch < r.Settings.Warmup
	if warmup {
		// The warm-up is a rule of its own, without kernels.
		u.Trunk, u.Head, u.Kernel = particles.Warmup{}, &particles.Linear{}, engine.KernelParams
	}
	start := time.Now()
	if err := r.steps(ctx, u, warmup, &start); err != nil {
		return err
	}
	// An interruption during the evaluation saves the epoch's steps
	// as done; resuming evaluates and carries on.
	lines, err := r.evaluate(ctx, lr)
	if ctx.Err() != nil {
		return r.interrupted(start)
	}
	r.seconds += time.Since(start).Seconds()
	if err != nil {
		return fmt.Errorf("epoch %d: %w", r.epoch+1, err)
	}
	return r.endEpoch(lines)
}

// steps runs the current epoch's steps from r.batch on, adding their
// losses to the epoch's sums. *start is when the time not yet added to
// r.seconds began.
func (r *Run) steps(ctx context.Context, u engine.Update, warmup bool, start *time.Time) error {
	k := len(r.TrainSet.Tasks())
	if !r.holdAsked {
		// On a device with room for it, the training set is uploaded
		// once and each step sends its batch's indices.
		if _, err := r.Trainer.Hold(r.TrainSet); err != nil {
			return err
		}
		r.holdAsked = true
	}
	batches := data.Epoch(r.TrainSet, r.Settings.Batch, true, r.Settings.Seed, r.epoch)
	batches.Skip(r.batch)
	if r.Hooks.EpochStart != nil {
		r.Hooks.EpochStart(r.epoch, batches.Len(), r.batch)
	}
	if r.batch == 0 {
		r.lossSum = make([]float64, k)
		r.particleLoss = make([][]float64, k)
		for j := range r.particleLoss {
			r.particleLoss[j] = make([]float64, len(r.Trainer.Particles))
		}
	}
	mean := make([]float64, k)
	for batches.Next() {
		if ctx.Err() != nil {
			return r.interrupted(*start)
		}
		losses, err := r.Trainer.Step(batches.Batch(), u)
		if err != nil {
			if nf := (*engine.NotFiniteError)(nil); errors.As(err, &nf) {
				err = diverged{err}
			}
			return fmt.Errorf("epoch %d: %w", r.epoch+1, err)
		}
		r.batch++
		if diag, ok := u.Trunk.(interface{ Diagnostics() particles.Diagnostics }); ok && r.Hooks.QP != nil && !warmup {
			r.Hooks.QP(r.Trainer.Steps, diag.Diagnostics())
		}
		for j, l := range losses {
			for i, v := range l {
				r.lossSum[j] += v / float64(len(l))
				if r.particleLoss != nil {
					r.particleLoss[j][i] += v
				}
			}
			mean[j] = r.lossSum[j] / float64(r.batch)
		}
		if r.Hooks.Step != nil {
			r.Hooks.Step(r.epoch, r.batch, mean)
		}
		if r.CheckpointEvery > 0 && r.Trainer.Steps%r.CheckpointEvery == 0 {
			r.seconds += time.Since(*start).Seconds()
			*start = time.Now()
			if err := r.save("last"); err != nil {
				return fmt.Errorf("%w; %s", err, r.lastGood())
			}
		}
	}
	return batches.Err()
}

// endUnsavedEpoch ends an epoch that SaveEvery saves with a later one:
// its state, if the best so far, is kept for best/, and its lines go to
// metrics.jsonl.
func (r *Run) endUnsavedEpoch(lines []MetricsLine, improved bool) error {
	if improved {
		prev := r.bestEpoch
		r.bestEpoch = r.epoch // the state kept says it is the best
		c, err := r.Checkpoint()
		if err != nil {
			r.bestEpoch = prev
			return err
		}
		r.pendingBest = cloneCheckpoint(c)
	}
	if err := r.appendMetrics(lines); err != nil {
		return fmt.Errorf("%w (resuming the run rewrites the file)", err)
	}
	if r.Hooks.EpochEnd != nil {
		r.Hooks.EpochEnd(r.epoch-1, lines)
	}
	return nil
}

// interrupted saves last/ at the current step, loads it back, and
// returns ErrInterrupted, or an error wrapping ErrUnsaved.
func (r *Run) interrupted(start time.Time) error {
	r.seconds += time.Since(start).Seconds()
	if err := r.saveVerified(); err != nil {
		return fmt.Errorf("%w: %w; %s", ErrUnsaved, err, r.lastGood())
	}
	return ErrInterrupted
}

// endEpoch records the epoch's scores lines and saves the checkpoints
// and metrics.jsonl.
func (r *Run) endEpoch(lines []MetricsLine) error {
	for i := range lines {
		lines[i].Seconds = r.seconds
	}
	// Scores that JSON cannot hold (non-finite despite the NLL's
	// clamp: a network whose outputs overflow) would make both
	// metrics.jsonl and the checkpoint's history unwritable. Save the
	// epoch's steps as done, without its scores, as an interruption
	// during the evaluation does, so that the epoch is not lost.
	if err := encodable(lines); err != nil {
		if serr := r.save("last"); serr != nil {
			return errors.Join(fmt.Errorf("epoch %d: %w", r.epoch+1, err), fmt.Errorf("%w; %s", serr, r.lastGood()))
		}
		return fmt.Errorf("epoch %d: %w: the run has diverged (lower -lr or -kernel-scale); its steps are saved in %s",
			r.epoch+1, diverged{err}, filepath.Join(r.Out, "last"))
	}
	improved := r.improves(lines)
	r.history = append(r.history, lines...)
	r.epoch, r.batch = r.epoch+1, 0
	if r.SaveEvery > 0 && time.Since(r.lastSave) < r.SaveEvery && r.epoch < r.Settings.Epochs {
		return r.endUnsavedEpoch(lines, improved)
	}
	// The checkpoints first, metrics.jsonl after: a failure to write
	// the metrics must not cost the epoch's checkpoint, and the
	// next epoch rewrites metrics.jsonl whole from the history.
	// best/ before last/, so that last/ records whether it was saved;
	// a failed best/ still saves last/, then reports the failure.
	var bestErr error
	if improved {
		r.pendingBest = nil // this epoch's state replaces it
		bestErr = r.saveBest()
	}
	if err := r.save("last"); err != nil {
		return errors.Join(bestErr, fmt.Errorf("%w; %s", err, r.lastGood()))
	}
	r.lastSave = time.Now()
	metricsErr := r.appendMetrics(lines)
	if bestErr != nil {
		return errors.Join(fmt.Errorf("%w; %s is saved (epoch %d), and resuming it saves best/ again once the cause is fixed",
			bestErr, filepath.Join(r.Out, "last"), r.epoch), metricsErr)
	}
	if metricsErr != nil {
		return fmt.Errorf("%w (the epoch's checkpoint is saved; resuming it rewrites the file)", metricsErr)
	}
	if r.Hooks.EpochEnd != nil {
		r.Hooks.EpochEnd(r.epoch-1, lines)
	}
	return nil
}
