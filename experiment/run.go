package experiment

import (
	"errors"
	"fmt"
	"time"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/particles"
)

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
	// holdAsked says that the trainer was asked to hold the training set
	// on its device (engine.Trainer.Hold), which it does once per run.
	holdAsked bool
	seconds   float64
	history   []MetricsLine
	// lastSave is when last/ was last saved at an epoch's end;
	// pendingBest, a copy of the state of the best epoch since, not yet
	// in best/ (SaveEvery).
	lastSave    time.Time
	pendingBest *checkpoints.Checkpoint
	// trunkRule is the rule that moves the trunks once training has
	// made it, kept for the run's life so that a rule with state
	// (particles.StatefulRule) carries it from one Train call to the
	// next and into the checkpoints; ruleState is its state as a
	// restored checkpoint held it, until the rule is made.
	trunkRule, headRule particles.Rule
	ruleState           []float64
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
	newTable := s.Dataset == files.Name && s.Files != nil && s.Files.Input == nil // not a restored run
	if d.Record != nil {
		if err := d.Record(&s); err != nil {
			return nil, err
		}
	}
	if s.Model == "" {
		s.Model = DefaultModel(d.Train.InputShape())
	}
	if newTable {
		s.sizeToTable(d.Train.Len(), d.Train.InputShape())
	}
	n := d.Train.Len()
	if s.TrainLimit > 0 {
		n = min(n, s.TrainLimit)
	}
	s.Resolve(n)
	if err := s.check(own); err != nil {
		return nil, err
	}
	if own == nil {
		// Once the data have loaded, every data set's tasks are known.
		method, _ := LookupMethod(s.Method)
		if err := s.checkFits(method, len(d.Train.Tasks())); err != nil {
			return nil, unfit{err}
		}
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

// stepsPerEpoch is the number of batches in an epoch.
func (r *Run) stepsPerEpoch() int {
	return (r.TrainSet.Len() + r.Settings.Batch - 1) / r.Settings.Batch
}
