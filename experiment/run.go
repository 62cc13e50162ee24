package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/metrics"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

// MetricsLine is one line of OUT/metrics.jsonl: one task's scores on one
// split after one epoch.
type MetricsLine struct {
	Epoch   int     `json:"epoch"`
	Step    int     `json:"step"`
	Split   string  `json:"split"` // test, or valid where there is a validation set
	Task    string  `json:"task"`
	LR      float64 `json:"lr"`
	Loss    float64 `json:"train_loss"` // mean over the epoch and the particles
	Seconds float64 `json:"seconds"`    // training time so far, over resumes
	metrics.Score
	Particles []metrics.Score `json:"particles"`
	// ParticleLoss is each particle's mean training loss of the task over
	// the epoch; absent for an epoch resumed mid-way from a checkpoint
	// that did not record it.
	ParticleLoss []float64 `json:"particle_train_loss,omitempty"`
}

// Hooks let a command show what a run does. Any may be nil.
type Hooks struct {
	// EpochStart is called before each epoch's first step, with the
	// number of batches in the epoch and how many are already done.
	EpochStart func(epoch, batches, done int)
	// Step is called after each step with the running mean task losses
	// of the epoch.
	Step func(epoch, batch int, meanLoss []float64)
	// EpochEnd is called after each epoch's evaluation.
	EpochEnd func(epoch int, lines []MetricsLine)
	// Saved is called after each checkpoint written.
	Saved func(dir string)
	// Metrics is called after each write of metrics.jsonl with the
	// history it holds, to draw what is drawn from it.
	Metrics func(history []MetricsLine)
	// QP is called after each step whose trunk rule solves one QP for
	// the whole ensemble (MT-SGD), with what the rule computed: U, w*
	// and the solver's certificate.
	QP func(step int, d particles.Diagnostics)
}

// Run is a training run in progress.
type Run struct {
	Settings Settings
	// The data sets with the settings' limits applied (the test limit
	// also limits the validation set). ValidSet is nil if the data set
	// has no validation split.
	TrainSet, ValidSet, TestSet data.Dataset
	Trainer                     *engine.Trainer

	// Out is the run's directory: metrics.jsonl, last/ and best/.
	Out string
	// CheckpointEvery, if positive, also saves last/ every that many
	// steps within an epoch.
	CheckpointEvery int
	// SaveEvery, if positive, is the least time between two saves at an
	// epoch's end: epochs shorter than it are saved together, the last
	// epoch and an interruption always, and the best epoch between two
	// saves is kept in memory until the next writes it to best/. A run
	// of many short epochs would otherwise spend most of its time
	// writing checkpoints. 0 saves every epoch.
	SaveEvery time.Duration
	// Best names the metric that selects best/ on the validation split:
	// accuracy (the higher the better), nll, brier, ece or mse (the
	// lower), averaged over tasks (see selection for regression tasks).
	// Without a validation split best/ is the last epoch.
	Best  string
	Hooks Hooks

	full  Data       // without the limits
	parts Components // what the caller built, nil where the settings name it

	epoch, batch int // the next step is batch `batch` of epoch `epoch`
	seconds      float64
	history      []MetricsLine
	// lastSave is when last/ was last saved at an epoch's end;
	// pendingBest, a copy of the state of the best epoch since, not yet
	// in best/ (SaveEvery).
	lastSave    time.Time
	pendingBest *checkpoints.Checkpoint
	// metricsSize is how many bytes of metrics.jsonl this process knows
	// to hold the history; 0 or -1 where it knows none.
	metricsSize int64
	lossSum     []float64 // this epoch's per-step mean task losses, summed
	// particleLoss is this epoch's per-step task losses of each particle,
	// summed ([task][particle]); nil when resumed mid-epoch from a
	// checkpoint without them.
	particleLoss [][]float64
	// bestEpoch is the epoch whose state best/ holds: 0 while no save of
	// best/ has succeeded, -1 when unknown (a checkpoint from before it
	// was recorded: best/ is then taken to hold the history's best epoch).
	bestEpoch int
	// temperatures are the per-task temperatures fitted on the
	// validation split at the last evaluation (calibration.go).
	temperatures []float64
}

// ErrInterrupted is returned by Train when its context ends and the run's
// state is saved in Out/last and loads back: Restore continues it.
var ErrInterrupted = errors.New("training interrupted")

// ErrUnsaved is returned by Train, instead of ErrInterrupted, when its
// context ends but saving Out/last failed or what it saved does not load
// back. The error says why and which checkpoint, if any, is the last good
// one.
var ErrUnsaved = errors.New("training interrupted, and its state could not be saved")

// ErrDiverged is wrapped by Train's error when the run met a NaN or Inf
// in a step's losses, gradients or directions, or in its scores: a
// learning-rate search records such a run as diverged rather than
// failing.
var ErrDiverged = errors.New("the run diverged")

// diverged marks err as a divergence (errors.Is(err, ErrDiverged))
// without changing its message.
type diverged struct{ err error }

func (d diverged) Error() string        { return d.err.Error() }
func (d diverged) Unwrap() error        { return d.err }
func (d diverged) Is(target error) bool { return target == ErrDiverged }

// New starts a run from scratch: particles initialised from the seed. A
// run too big for the machine's memory is refused before it allocates,
// with an error wrapping sysmem.ErrTooBig.
func New(s Settings, d Data, workers int) (*Run, error) {
	return NewWith(s, d, Components{}, workers)
}

// NewWith is New with parts built by the caller (Components) in place of
// those the settings name.
func NewWith(s Settings, d Data, c Components, workers int) (*Run, error) {
	own, err := c.method(s.Method)
	if err != nil {
		return nil, err
	}
	if d.Record != nil {
		if err := d.Record(&s); err != nil {
			return nil, err
		}
	}
	if s.Model == "" {
		s.Model = DefaultModel(d.Train.InputShape())
	}
	n := d.Train.Len()
	if s.TrainLimit > 0 {
		n = min(n, s.TrainLimit)
	}
	s.Resolve(n)
	if err := s.check(own); err != nil {
		return nil, err
	}
	r := &Run{Settings: s, TrainSet: d.Train, ValidSet: d.Valid, TestSet: d.Test, Best: DefaultBest(s.Dataset), full: d, parts: c}
	if s.TrainLimit > 0 {
		r.TrainSet = data.Limit(d.Train, s.TrainLimit)
	}
	if s.TestLimit > 0 {
		r.TestSet = data.Limit(d.Test, s.TestLimit)
		if d.Valid != nil {
			r.ValidSet = data.Limit(d.Valid, s.TestLimit)
		}
	}
	cfg, err := s.engineConfig(d.Train, c)
	if err != nil {
		return nil, err
	}
	evaluated := r.TestSet.Len()
	if r.ValidSet != nil {
		evaluated = max(evaluated, r.ValidSet.Len())
	}
	if err := s.checkMemory(cfg, evaluated, workers); err != nil {
		return nil, err
	}
	if r.Trainer, err = engine.New(cfg, s.Particles, s.Seed, s.NewOptimizer, workers); err != nil {
		return nil, err
	}
	return r, nil
}

// DefaultBest is the metric that selects best/ by default: the data set's
// (Dataset.Best), the ensemble's accuracy on a name no data set is
// registered under.
func DefaultBest(dataset string) string {
	if d, ok := datasets.Lookup(dataset); ok && d.Best != "" {
		return d.Best
	}
	return "accuracy"
}

// Split returns the "train", "valid" or "test" set limited to its first
// limit examples: limit < 0 keeps the run's own limit, 0 takes all.
func (r *Run) Split(name string, limit int) (data.Dataset, error) {
	var set, full data.Dataset
	switch name {
	case "test":
		set, full = r.TestSet, r.full.Test
	case "train":
		set, full = r.TrainSet, r.full.Train
	case "valid":
		if r.ValidSet == nil {
			return nil, fmt.Errorf("%s has no validation split", r.Settings.Dataset)
		}
		set, full = r.ValidSet, r.full.Valid
	default:
		return nil, fmt.Errorf("split %q is not train, valid or test", name)
	}
	switch {
	case limit < 0:
		return set, nil
	case limit == 0:
		return full, nil
	}
	return data.Limit(full, limit), nil
}

// Close frees what the run holds on a device (engine.Trainer.Close): the
// ensemble, the optimisers' state and the graphs' buffers. A process that
// trains or opens several runs, as compare does, closes each when done
// with it; on the CPU it frees nothing. The run must not train or predict
// afterwards.
func (r *Run) Close() error { return r.Trainer.Close() }

// Epoch is the number of completed epochs.
func (r *Run) Epoch() int { return r.epoch }

// History is every evaluation so far.
func (r *Run) History() []MetricsLine { return r.history }

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

// markDiverged marks err as a divergence if a NaN or Inf caused it and it
// is not marked yet. On a device a step's directions are checked after
// the optimisers moved along them (engine's Trainer.Sync), so the failure
// may come from what reads the parameters next (the evaluation, a
// checkpoint's save) rather than from the step: none of those then
// saves anything.
func markDiverged(err error) error {
	if nf := (*engine.NotFiniteError)(nil); errors.As(err, &nf) && !errors.Is(err, ErrDiverged) {
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
	p.trunk, p.head = r.parts.Trunk, r.parts.Head
	if p.trunk == nil {
		var err error
		if p.trunk, p.head, err = r.Settings.Rules(len(r.TrainSet.Tasks()), r.stepsPerEpoch()); err != nil {
			return p, err
		}
	}
	var err error
	if p.schedule, err = r.Settings.LRSchedule(); err != nil {
		return p, err
	}
	if p.scale, err = engine.ParseScoreScale(r.Settings.ScoreScale); err != nil {
		return p, err
	}
	if p.space, err = engine.ParseKernelSpace(r.Settings.KernelOn); err != nil {
		return p, err
	}
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

// trainEpoch runs the current epoch's remaining steps, then evaluates
// the epoch and saves it.
func (r *Run) trainEpoch(ctx context.Context, p rules) error {
	lr := p.schedule.LR(r.epoch)
	r.Trainer.SetLR(lr)
	u := engine.Update{
		Trunk: p.trunk, Head: p.head, Scale: p.scale, Examples: r.TrainSet.Len(),
		Kernel: p.space, OutputKernel: particles.RBF{Scale: r.Settings.KernelScale}, HeadsFirst: r.Settings.Order == "heads-first",
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

// evaluate scores the ensemble on the validation set, if any, and the test
// set, one line per split and task.
func (r *Run) evaluate(ctx context.Context, lr float64) ([]MetricsLine, error) {
	var lines []MetricsLine
	for _, split := range []struct {
		name string
		set  data.Dataset
	}{{"valid", r.ValidSet}, {"test", r.TestSet}} {
		if split.set == nil {
			continue
		}
		if split.name == "test" && samePointer(r.TestSet, r.ValidSet) && len(lines) > 0 {
			// The validation split serves as the test split (a file data
			// set without test files): its scores, computed once.
			for _, l := range lines[:len(lines):len(lines)] {
				l.Split = "test"
				lines = append(lines, l)
			}
			continue
		}
		out, labels, err := r.Trainer.Outputs(ctx, split.set)
		if err != nil {
			return nil, fmt.Errorf("evaluating on %s: %w", split.set.Name(), err)
		}
		scores, err := r.Trainer.Score(out, labels)
		if err != nil {
			return nil, fmt.Errorf("evaluating on %s: %w", split.set.Name(), err)
		}
		if split.name == "valid" && split.set.Len() >= MinCalibrationExamples {
			// A fit fails only on scores that are not finite, which the
			// run reports as a divergence of its own: no temperatures.
			r.temperatures, _ = FitTemperatures(split.set.Tasks(), out, labels)
		}
		for j, s := range scores {
			var perParticle []float64
			if r.particleLoss != nil {
				perParticle = make([]float64, len(r.particleLoss[j]))
				for i, v := range r.particleLoss[j] {
					perParticle[i] = v / float64(max(1, r.batch))
				}
			}
			lines = append(lines, MetricsLine{
				Epoch: r.epoch + 1, Step: r.Trainer.Steps, Split: split.name, Task: s.Task, LR: lr,
				Loss: r.lossSum[j] / float64(max(1, r.batch)), Score: s.Ensemble, Particles: s.Particles,
				ParticleLoss: perParticle,
			})
		}
	}
	return lines, nil
}

// samePointer reports whether a and b are the same pointer: one data
// set serving as two splits.
func samePointer(a, b data.Dataset) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Kind() == reflect.Pointer && vb.Kind() == reflect.Pointer && va.Pointer() == vb.Pointer() && va.Type() == vb.Type()
}

// MinSelectionExamples is the smallest validation split whose scores
// choose best/ without a warning (SelectionWarning).
const MinSelectionExamples = 30

// Selection says in words how best/ is chosen, for the log.
func (r *Run) Selection() string {
	if r.ValidSet == nil {
		return "best/ is the last epoch: there is no validation split, and the test split never chooses"
	}
	what := r.Best
	switch {
	case r.Best == "mse":
		what = "mse (a classification task does not count)"
	case r.hasKind(data.Regression):
		what += ", a regression task by its Gaussian NLL at the estimated variance, ½·log(2πe·MSE)"
	}
	return fmt.Sprintf("best/ is the epoch with the best validation %s, averaged over tasks", what)
}

// SelectionWarning is a warning, or "", about the validation split that
// chooses best/: one of fewer than MinSelectionExamples examples chooses
// by chance as much as by merit.
func (r *Run) SelectionWarning() string {
	if r.ValidSet == nil || r.ValidSet.Len() >= MinSelectionExamples {
		return ""
	}
	return fmt.Sprintf("the validation split has %d examples, too few to choose best/ on (at least %d): hold out more with -valid N (or a larger valid file), or none with -valid 0 to keep the last epoch",
		r.ValidSet.Len(), MinSelectionExamples)
}

func (r *Run) hasKind(k data.Kind) bool {
	return slices.ContainsFunc(r.TrainSet.Tasks(), func(t data.Task) bool { return t.Kind == k })
}

// selection is the value of the Best metric over one epoch's validation
// lines, with the sign turned so that larger is better. A regression
// task counts by its MSE under "mse", else by its Gaussian NLL at the
// estimated variance (the MSE) less constants, −½·log(MSE): in nats like
// a classification task's NLL, and whatever the targets' units, only
// their relative improvement matters.
func (r *Run) selection(lines []MetricsLine) float64 {
	v, n := 0.0, 0
	for _, l := range lines {
		if l.Split != "valid" {
			continue
		}
		n++
		switch {
		case l.Regression != nil && r.Best == "mse":
			v -= l.MSE
		case l.Regression != nil:
			v -= 0.5 * math.Log(max(l.MSE, math.SmallestNonzeroFloat64))
		case r.Best == "accuracy":
			v += l.Accuracy
		case r.Best == "nll":
			v -= l.NLL
		case r.Best == "brier":
			v -= l.Brier
		case r.Best == "ece":
			v -= l.ECE
		}
	}
	return v / float64(max(1, n))
}

// improves reports whether lines beat, by the Best metric, the epoch
// best/ holds (every earlier epoch where that is unknown). Without a
// validation split every epoch does: best/ is the last.
func (r *Run) improves(lines []MetricsLine) bool {
	if r.ValidSet == nil {
		return true
	}
	best := math.Inf(-1)
	switch {
	case r.bestEpoch > 0:
		best = r.selection(r.epochLines(r.bestEpoch))
	case r.bestEpoch < 0:
		for e := 1; e <= r.epoch; e++ {
			best = max(best, r.selection(r.epochLines(e)))
		}
	}
	return r.selection(lines) > best
}

// epochLines returns the history's lines of epoch e (1-based).
func (r *Run) epochLines(e int) []MetricsLine {
	var lines []MetricsLine
	for _, l := range r.history {
		if l.Epoch == e {
			lines = append(lines, l)
		}
	}
	return lines
}

// BestMetrics are the values Run.Best accepts.
var BestMetrics = []string{"accuracy", "nll", "brier", "ece", "mse"}

// encodable reports the first metrics line that JSON cannot encode (a
// non-finite score), naming its split and task.
func encodable(lines []MetricsLine) error {
	for _, l := range lines {
		if _, err := json.Marshal(l); err != nil {
			return fmt.Errorf("scores on %s of task %s are not finite: %w", l.Split, l.Task, err)
		}
	}
	return nil
}

// MetricsFile is the name of the run's metrics file in its directory.
const MetricsFile = "metrics.jsonl"

// encodeHistory is what metrics.jsonl holds: one JSON line per history
// line.
func (r *Run) encodeHistory() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, l := range r.history {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// appendMetrics adds the epoch's lines to metrics.jsonl. The file is
// appended to, without fsync, where it holds what this process wrote of
// the history before them: the checkpoint's history is the record, and a
// file cut short or edited is rewritten from it whole (here, or by
// syncMetrics when the run resumes). Rewriting the whole file every
// epoch would cost a run of many short epochs more than its training.
func (r *Run) appendMetrics(lines []MetricsLine) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	path := filepath.Join(r.Out, MetricsFile)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() || st.Size() != r.metricsSize || r.metricsSize == 0 {
		whole, err := r.encodeHistory()
		if err != nil {
			return err
		}
		return r.writeMetricsBytes(whole)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|noFollow, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.metricsSize = -1 // unknown: the next epoch rewrites the file
		return err
	}
	r.metricsSize += int64(b.Len())
	if r.Hooks.Metrics != nil {
		r.Hooks.Metrics(r.history)
	}
	return nil
}

// writeMetricsBytes replaces metrics.jsonl by b, the whole history.
func (r *Run) writeMetricsBytes(b []byte) error {
	r.metricsSize = -1
	err := atomicfile.Write(filepath.Join(r.Out, MetricsFile), 0o644, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	r.metricsSize = int64(len(b))
	if r.Hooks.Metrics != nil {
		r.Hooks.Metrics(r.history)
	}
	return nil
}

// syncMetrics rewrites metrics.jsonl from the history unless it holds
// exactly what the history encodes (a run without history yet needs no
// file).
func (r *Run) syncMetrics() error {
	want, err := r.encodeHistory()
	if err != nil {
		return err
	}
	path := filepath.Join(r.Out, MetricsFile)
	have, err := readSized(path, len(want))
	switch {
	case errors.Is(err, os.ErrNotExist) && len(want) == 0:
		return nil
	case err == nil && bytes.Equal(have, want):
		r.metricsSize = int64(len(want))
		return nil
	}
	if err := r.writeMetricsBytes(want); err != nil {
		return fmt.Errorf("rewriting %s from the checkpoint's history: %w", path, err)
	}
	return nil
}

// readSized returns the content of the regular file at path if it has
// size bytes; otherwise nil, or the error opening it. It never reads more
// than size bytes.
func readSized(path string, size int) ([]byte, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() != int64(size) {
		return nil, nil
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil
	}
	return b, nil
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
	st := runState{Seconds: r.seconds, LossSum: r.lossSum, ParticleLossSum: r.particleLoss, History: r.history, Temperatures: r.temperatures}
	if r.bestEpoch >= 0 {
		st.BestEpoch = &r.bestEpoch
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
			if !(t >= metrics.MinTemperature && t <= metrics.MaxTemperature) {
				return nil, fmt.Errorf("checkpoint metrics: temperature %v of task %d outside [%v, %v]", t, j, metrics.MinTemperature, metrics.MaxTemperature)
			}
		}
		r.temperatures = state.Temperatures
	}
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

// stepsPerEpoch is the number of batches in an epoch.
func (r *Run) stepsPerEpoch() int {
	return (r.TrainSet.Len() + r.Settings.Batch - 1) / r.Settings.Batch
}
