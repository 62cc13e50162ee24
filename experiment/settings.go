// Package experiment runs network training as the commands do: it turns
// the settings of a run into data, an ensemble and its update rules, runs
// the epochs with evaluation after each, and saves and restores the whole
// state through package checkpoints so that a run can be resumed exactly
// and evaluated later (cmd/train, cmd/eval).
//
// The names a run's settings give have one registry each here, so that
// the commands' flags, checks and help, the defaults and checkpoint
// restore all read the same table: methods (Method, RegisterMethod,
// LookupMethod), models (Model, RegisterModel, LookupModel) and data sets
// (Dataset, RegisterDataset, LookupDataset). The built-ins are registered
// in methods.go (each method's value in its own file, method_<name>.go),
// models.go and datasets.go, in the order of every list the commands
// print; whatever a Register call adds (from an init function, or before
// the command parses its flags) comes after them. A new method can so be
// one file whose init function registers it, and its test file
// (docs/extending.md). A checkpoint records only a name, so the run that
// resumes it must have it registered too. The toy problems have their
// own registry in package particles/toy: they are densities, without
// data, models or checkpoints.
//
// A run can also be driven from Go with parts built there rather than
// registered: NewWith and RestoreWith take a models.Model and the
// trunk and head rules (Components) beside the settings and the data,
// and run the same loop, checkpoints and resume (see the example).
package experiment

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

// Settings define a run: a checkpoint records them, and they rebuild the
// same data, model and updates.
type Settings struct {
	Dataset       string        `json:"dataset"`
	Model         string        `json:"model"`
	Method        string        `json:"method"`
	Particles     int           `json:"particles"`
	Epochs        int           `json:"epochs"`
	Batch         int           `json:"batch"`
	LR            float64       `json:"lr"`
	Optimizer     OptimizerKind `json:"optimizer"`
	Momentum      float64       `json:"momentum"`
	Schedule      ScheduleKind  `json:"lr_schedule"`
	Milestones    string        `json:"lr_milestones"`
	Gamma         float64       `json:"lr_gamma"`
	Every         int           `json:"lr_every"`
	Warmup        int           `json:"warmup"`
	KernelScale   float64       `json:"kernel_scale"`
	Repulsion     float64       `json:"repulsion"`
	HeadRepulsion float64       `json:"head_repulsion"`
	Seed          uint64        `json:"seed"`
	Tasks         string        `json:"tasks,omitempty"`
	TrainLimit    int           `json:"train_limit"`
	TestLimit     int           `json:"test_limit"`
	Dtype         Dtype         `json:"dtype"`

	// Preset names the preset the MT-SGD choices below came from (see
	// Presets); a flag given beside it overrides its own setting, and
	// these fields record what the run used.
	Preset string `json:"preset,omitempty"`
	// ScoreScale is engine.ScoreScales' mean, sum or normalized
	// (ScaleUnnamed, "", is mean, as before the setting existed).
	ScoreScale ScoreScale `json:"score_scale,omitempty"`
	// UTerms is full (Equation Uij-1, four terms) or first (the
	// kernel-weighted score products only, as the authors' code);
	// UTermsUnnamed is full.
	UTerms UTerms `json:"u_terms,omitempty"`
	// KernelOn is engine.KernelSpaces' params (the kernels over the
	// parameter vectors, as Algorithm 1) or outputs (over the trunk's
	// features and the heads' outputs on the batch, as the authors'
	// code); KernelUnnamed is params.
	KernelOn KernelSpace `json:"kernel_on,omitempty"`
	// Order is joint (one gradient evaluation moves trunks and heads)
	// or heads-first (the heads move first, and the trunks' task
	// gradients are taken through the moved heads, as the authors'
	// code); OrderUnnamed is joint.
	Order UpdateOrder `json:"order,omitempty"`
	// Valid is the number of training composites held out for
	// validation on the Multi-* data sets (0: none, the whole training
	// set trains; see multimnist.Variant.LoadValid), or training examples
	// on the file data set where it has no valid.npz (files.AutoValid:
	// a tenth).
	Valid int `json:"valid,omitempty"`
	// Hidden is the MLP's hidden layer widths, e.g. "256,256,256" (""
	// is MLPHidden).
	Hidden string `json:"hidden,omitempty"`
	// Files is the file data set's directory and, once its data has
	// loaded (Data.Record), what its training split decided: input
	// shape, tasks, normalisation. Nil for the other data sets.
	Files *files.Spec `json:"files,omitempty"`
	// Repel makes a particle method of a method whose particles move
	// independently: its trunk directions drive an SVGD step with the
	// RBF kernel across the particles (particles.Repelled), with the
	// kernel scale and the trunk repulsion weight of these settings.
	Repel bool `json:"repel,omitempty"`
	// MethodParams are the method's own hyperparameters by name (its
	// Method.Params), where they differ from the method's defaults.
	MethodParams map[string]float64 `json:"method_params,omitempty"`
}

// Equal reports whether s and o are the same settings; a method without
// parameters may hold them as a nil or an empty map.
func (s Settings) Equal(o Settings) bool {
	if len(s.MethodParams) == 0 && len(o.MethodParams) == 0 {
		s.MethodParams, o.MethodParams = nil, nil
	}
	return reflect.DeepEqual(s, o)
}

// AutoRepulsion, as Repulsion or HeadRepulsion, stands for the default
// of the score scale (see DefaultRepulsion); Resolve replaces it.
const AutoRepulsion = -1

// DefaultValid is the Multi-* validation split: 10,000 of the 120,000
// training composites (the composites of the last 5,000 source images),
// the size of half the test set.
const DefaultValid = 10_000

// A Preset is a named set of the MT-SGD choices where the paper and the
// authors' code differ. Settings records each choice; a flag given with
// the preset overrides that choice alone.
type Preset struct {
	Name, Doc  string
	ScoreScale ScoreScale
	UTerms     UTerms
	Warmup     int
	KernelOn   KernelSpace
	Order      UpdateOrder
}

// Presets are the readings of MT-SGD on networks. They leave the
// repulsion weights to the score scale's defaults.
var Presets = []Preset{
	{
		Name: "paper", ScoreScale: ScaleMean, UTerms: UTermsFull, Warmup: 0, KernelOn: KernelOnParams, Order: OrderJoint,
		Doc: "Algorithm 1 as printed: kernels over the parameters, the four-term U, no warm-up, scores of the batch-mean loss with repulsion 1/N (the paper's posterior exp(−Σ ℓ), its factor N absorbed into the learning rate)",
	},
	{
		Name: "authors", ScoreScale: ScaleNormalized, UTerms: UTermsFirst, Warmup: 1, KernelOn: KernelOnOutputs, Order: OrderHeadsFirst,
		Doc: "the authors' code: kernels over the trunk's features and the heads' outputs on the batch, heads moved first, trunk scores normalised per coordinate across particles, the first term of U only, one warm-up epoch, repulsion 0.0015 (trunk) and 0.25 (heads)",
	},
	{
		Name: "authors-params", ScoreScale: ScaleNormalized, UTerms: UTermsFirst, Warmup: 1, KernelOn: KernelOnParams, Order: OrderJoint,
		Doc: "the authors' choices with the paper's kernels over the parameters and one gradient evaluation per step (half the cost of authors)",
	},
}

// DefaultPreset is what a network run uses unless told otherwise; it is
// the preset that did best on the Multi-MNIST validation split
// (docs/mtsgd-choices.md, "Which preset is the default").
const DefaultPreset = "authors-params"

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, error) {
	var names []string
	for _, p := range Presets {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("preset %q is not one of %s", name, strings.Join(names, ", "))
}

// Apply sets the preset's choices in s, the repulsion weights to their
// score-scale defaults.
func (p Preset) Apply(s *Settings) {
	s.Preset, s.ScoreScale, s.UTerms, s.Warmup = p.Name, p.ScoreScale, p.UTerms, p.Warmup
	s.KernelOn, s.Order = p.KernelOn, p.Order
	s.Repulsion, s.HeadRepulsion = AutoRepulsion, AutoRepulsion
}

// ForMethod returns s for method: the presets are MT-SGD's, so any other
// method drops them and takes the batch-mean scores, no warm-up and the
// repulsion weights of that scale (for the kernel baselines): every
// baseline then sees exactly the gradients and optimiser the data set's
// defaults give.
func (s Settings) ForMethod(method string) Settings {
	s.Method = method
	if m, err := LookupMethod(method); err != nil || !m.Presets {
		s.Preset, s.ScoreScale, s.UTerms, s.Warmup = "", ScaleMean, UTermsUnnamed, 0
		s.KernelOn, s.Order = KernelUnnamed, OrderUnnamed
		s.Repulsion, s.HeadRepulsion = AutoRepulsion, AutoRepulsion
	}
	return s
}

// DefaultRepulsion is the repulsion weight of the trunks' and the heads'
// kernel-gradient term that fits a score scale, for a training set of n
// examples. ScoreSum is the paper's posterior, whose SVGD has weight 1;
// ScoreMean divides those scores by n, so 1/n keeps the paper's balance
// of driving and repulsion (a weight of 1 there would be SVGD on the
// posterior tempered by n, whose repulsion swamps the scores: the plateau
// the issue measured); ScoreNormalized has no posterior behind it and
// takes the authors' published weights, 0.0015 and 0.25.
func DefaultRepulsion(scale ScoreScale, n int) (trunk, heads float64) {
	switch scale {
	case ScaleSum:
		return 1, 1
	case ScaleNormalized:
		return 0.0015, 0.25
	}
	return 1 / float64(max(n, 1)), 1 / float64(max(n, 1))
}

// Resolve replaces AutoRepulsion by the score scale's default for a
// training set of n examples.
func (s *Settings) Resolve(n int) {
	trunk, heads := DefaultRepulsion(s.ScoreScale, n)
	if s.Repulsion == AutoRepulsion {
		s.Repulsion = trunk
	}
	if s.HeadRepulsion == AutoRepulsion {
		s.HeadRepulsion = heads
	}
}

// Defaults are the paper's settings for a network data set: five
// particles, DefaultMethod with the choices of DefaultPreset, kernel
// scale 1, seed 1, float32, and the Multi-* protocol (SGD with momentum
// 0.9 at 1e-3, batch 256, 100 epochs, the rate halved at epochs 15, 30,
// …, 90), changed by the data set's own Defaults (Dataset) and with its
// model. On a name no data set is registered under they are the common
// settings alone, without a model.
func Defaults(dataset string) Settings {
	s := Settings{
		Dataset: dataset, Method: DefaultMethod, Particles: 5,
		Epochs: 100, Batch: 256, LR: 1e-3, Optimizer: OptimizerSGD, Momentum: 0.9,
		Schedule: ScheduleMultiStep, Milestones: "15,30,45,60,75,90", Gamma: 0.5, Every: 1,
		KernelScale: 1, Seed: 1, Dtype: DtypeFloat32,
	}
	if p, err := LookupPreset(DefaultPreset); err == nil {
		p.Apply(&s)
	}
	if d, ok := datasets.Lookup(dataset); ok {
		s.Model = d.Model
		if d.Defaults != nil {
			d.Defaults(&s)
		}
	}
	return s
}

// Check reports the first setting that cannot make a run.
func (s Settings) Check() error { return s.check(nil) }

// check is Check with the rules' method given (own, for rules built by
// the caller: Components) rather than looked up by name.
func (s Settings) check(own *Method) error {
	if err := s.checkNumbers(); err != nil {
		return err
	}
	method, err := LookupMethod(s.Method)
	if own != nil {
		method, err = *own, nil
	}
	if err != nil {
		return fmt.Errorf("-%w", err)
	}
	if err := s.checkDataset(); err != nil {
		return err
	}
	if err := s.checkFits(method, TaskCount(s)); err != nil {
		return err
	}
	if s.Preset != "" && !method.Presets && own == nil {
		return fmt.Errorf("-preset %s sets the choices of %s; -method %s takes none of them",
			s.Preset, strings.Join(MethodNames(func(m Method) bool { return m.Presets }), ", "), s.Method)
	}
	if _, err := s.LRSchedule(); err != nil {
		return err
	}
	if s.KernelOn == KernelOnOutputs {
		switch {
		case !method.Kernels:
			return fmt.Errorf("-kernel-on outputs places the kernels of %s; %s has none",
				strings.Join(MethodNames(func(m Method) bool { return m.Kernels }), ", "), s.Method)
		case method.Presets && !s.UTerms.FirstOnly():
			return errors.New("-kernel-on outputs needs -u-terms first: the four-term U is defined for a kernel over the parameters")
		}
	}
	if s.Preset != "" {
		if _, err := LookupPreset(s.Preset); err != nil {
			return fmt.Errorf("-preset: %w", err)
		}
	}
	return s.checkMethodOptions(method)
}

// CheckMethodOptions checks -repel and the method's own parameters
// against what the settings' method takes.
func (s Settings) CheckMethodOptions() error {
	method, err := LookupMethod(s.Method)
	if err != nil {
		return fmt.Errorf("-%w", err)
	}
	return s.checkMethodOptions(method)
}

// checkMethodOptions checks -repel and the method's own parameters
// against what the method takes.
func (s Settings) checkMethodOptions(method Method) error {
	if s.Repel {
		switch {
		case method.Kernels:
			return fmt.Errorf("-repel: %s repels its particles already", method.Name)
		case !method.shared(s):
			return fmt.Errorf("-repel: %s has no shared trunk to repel", method.Name)
		case s.KernelOn == KernelOnOutputs:
			return errors.New("-repel places its kernel over the parameters; -kernel-on outputs is for the kernel methods")
		}
	}
	for name, v := range s.MethodParams {
		p, ok := method.Param(name)
		if !ok {
			return fmt.Errorf("%s takes no parameter %q (%s)", method.Name, name, method.paramNames())
		}
		if err := p.check(v); err != nil {
			return fmt.Errorf("-%s-%s: %w", method.Name, name, err)
		}
	}
	return nil
}

// checkNumbers checks the settings that stand alone: each number in its
// range, each named choice one of its values.
func (s Settings) checkNumbers() error {
	// Every float flag must be finite: an infinite or NaN value passes the
	// range checks below (NaN compares false) and only fails, with a
	// misleading message, once training has produced non-finite weights.
	for _, f := range []struct {
		flag string
		v    float64
	}{
		{"-lr", s.LR}, {"-momentum", s.Momentum}, {"-lr-gamma", s.Gamma},
		{"-kernel-scale", s.KernelScale}, {"-repulsion", s.Repulsion},
		{"-head-repulsion", s.HeadRepulsion},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s must be a finite number, got %v", f.flag, f.v)
		}
	}
	switch {
	case s.Particles < 1:
		return fmt.Errorf("-particles must be at least 1, got %d", s.Particles)
	case !(s.LR > 0):
		return fmt.Errorf("-lr must be positive, got %v", s.LR)
	case s.Optimizer != OptimizerAdam && s.Optimizer != OptimizerSGD:
		return fmt.Errorf("-optimizer must be adam or sgd, got %q", s.Optimizer)
	case s.Momentum < 0 || s.Momentum >= 1:
		return fmt.Errorf("-momentum must be in [0, 1), got %v", s.Momentum)
	case !(s.KernelScale > 0):
		return fmt.Errorf("-kernel-scale must be positive, got %v", s.KernelScale)
	case s.Repulsion < 0 && s.Repulsion != AutoRepulsion:
		return fmt.Errorf("-repulsion must be non-negative, got %v", s.Repulsion)
	case s.HeadRepulsion < 0 && s.HeadRepulsion != AutoRepulsion:
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
	case s.Dtype != DtypeFloat32 && s.Dtype != DtypeFloat64:
		return fmt.Errorf("-dtype must be float32 or float64, got %q", s.Dtype)
	}
	return nil
}

// checkDataset checks the settings that only some data sets take. A
// name no data set is registered under (a toy problem, a test's data)
// takes none of them.
func (s Settings) checkDataset() error {
	d, known := datasets.Lookup(s.Dataset)
	if s.Tasks != "" && (!known || d.CheckTasks == nil) {
		return fmt.Errorf("-tasks chooses the tasks of %s; %s has fixed tasks",
			strings.Join(DatasetsWith(func(d Dataset) bool { return d.CheckTasks != nil }), ", "), s.Dataset)
	}
	if s.Valid != 0 && (!known || d.CheckValid == nil) {
		return fmt.Errorf("-valid holds out training examples for validation on %s; %s has its own validation split",
			strings.Join(DatasetsWith(func(d Dataset) bool { return d.CheckValid != nil }), ", "), s.Dataset)
	}
	if s.Hidden != "" {
		if _, err := ParseHidden(s.Hidden); err != nil {
			return err
		}
	}
	switch {
	case s.Dataset == files.Name && (s.Files == nil || s.Files.Dir == ""):
		return errors.New("-dataset files needs -data DIR, the directory of your files")
	case s.Dataset != files.Name && s.Files != nil:
		return fmt.Errorf("-data DIR trains on the files in DIR; it cannot be given with -dataset %s", s.Dataset)
	case s.Files != nil:
		if err := s.Files.CheckTasks(); err != nil {
			return err
		}
	}
	if known && d.CheckTasks != nil {
		if err := d.CheckTasks(s.Tasks); err != nil {
			return err
		}
	}
	if known && d.CheckValid != nil && s.Valid != 0 {
		return d.CheckValid(s.Valid)
	}
	return nil
}

// NewOptimizer returns a fresh optimiser as the settings describe.
func (s Settings) NewOptimizer() optim.Optimizer {
	if s.Optimizer == OptimizerSGD {
		return &optim.SGD{LR: s.LR, Momentum: s.Momentum}
	}
	return optim.NewAdam(s.LR)
}

// LRSchedule is the learning-rate schedule the settings describe.
func (s Settings) LRSchedule() (optim.Schedule, error) {
	switch s.Schedule {
	case ScheduleConstant:
		return optim.Constant(s.LR), nil
	case ScheduleExponential:
		return optim.Exponential{Base: s.LR, Gamma: s.Gamma, Every: s.Every}, nil
	case ScheduleMultiStep:
		ms, err := optim.ParseMilestones(s.Milestones)
		if err != nil {
			return nil, fmt.Errorf("-lr-milestones: %w", err)
		}
		return optim.MultiStep{Base: s.LR, Milestones: ms, Gamma: s.Gamma}, nil
	}
	return nil, fmt.Errorf("-lr-schedule must be multistep, exponential or constant, got %q", s.Schedule)
}

// Rules returns the update rules of the settings' method (LookupMethod)
// for the trunks and for each task's heads, given the number of tasks and
// of steps in an epoch. The built-in methods:
//
//	mtsgd       trunks: MT-SGD (kernel on the flat trunks); heads: SVGD
//	            per task (kernel on each task's flat heads)
//	moo-svgd    trunks: MOO-SVGD (kernel on the flat trunks); heads: SVGD
//	svgd        trunks: SVGD on the tasks' tempered product; heads: SVGD
//	linear      no interaction: each trunk follows the mean of its task
//	            scores (equal weights 1/K); each head its own task's score
//	mgda        no interaction: each trunk follows the min-norm combination
//	            of its task scores; each head its own task's score
//	pareto-mtl  no interaction: particle i follows Pareto MTL with Lin et
//	            al.'s preference vector i (two tasks only); during the first
//	            two epochs of the budget a particle outside its sub-region
//	            takes feasibility steps; each head its own task's score
//	single      one whole network per task and particle (no shared trunk),
//	            each following its own task's score
func (s Settings) Rules(tasks, stepsPerEpoch int) (trunk, head particles.Rule, err error) {
	m, err := LookupMethod(s.Method)
	if err != nil {
		return nil, nil, err
	}
	p := RuleParams{Settings: s, Tasks: tasks, StepsPerEpoch: stepsPerEpoch}
	// A run without a shared trunk trains models.Independent, whose
	// trunk is empty: any rule will do, and it never moves anything;
	// or, for one task, that task's network (Settings.model), whose
	// trunk follows the one score as Linear moves it.
	trunk = &particles.Linear{}
	if m.shared(s) {
		if trunk, err = m.TrunkRule(p); err != nil {
			return nil, nil, err
		}
	}
	if head, err = m.Heads(p); err != nil {
		return nil, nil, err
	}
	return trunk, head, nil
}

// Data are a run's data sets. Valid is nil for data sets without a
// validation split (Multi-* with Settings.Valid 0); with one, it selects
// the best checkpoint.
type Data struct {
	Train, Valid, Test data.Dataset
	// Record, if not nil, writes into a new run's settings what loading
	// decided (the file data set: input shape, tasks, normalisation), so
	// that its checkpoints hold it; for a run restored from settings
	// that hold it already, it checks that the data agree with them.
	Record func(s *Settings) error
	// Notes say what loading decided that a person should see (the file
	// data set's columns, categories, classes, dropped rows, missing
	// labels).
	Notes []string
}

// LoadData reads or builds the full data sets of s.Dataset from dataDir
// (see data.Dir); Run applies the settings' limits.
func LoadData(s Settings, dataDir string) (Data, time.Duration, error) {
	dir, err := data.Dir(dataDir)
	if err != nil {
		return Data{}, 0, err
	}
	ds, err := LookupDataset(s.Dataset)
	if err != nil {
		return Data{}, 0, err
	}
	start := time.Now()
	d, err := ds.Load(dir, s)
	if err != nil {
		return Data{}, 0, err
	}
	return d, time.Since(start), nil
}

// model builds the network the settings name for a data set; for a
// method without a shared trunk, one such network per task.
func (s Settings) model(d data.Dataset) (models.Model, error) {
	arch, err := LookupModel(s.Model)
	if err != nil {
		return nil, err
	}
	method, err := LookupMethod(s.Method)
	if err != nil {
		return nil, err
	}
	if method.shared(s) {
		m, err := arch.New(d.InputShape(), d.Tasks(), s)
		if err != nil {
			return nil, unfit{err}
		}
		return m, nil
	}
	var nets []models.Model
	for _, t := range d.Tasks() {
		net, err := arch.New(d.InputShape(), []data.Task{t}, s)
		if err != nil {
			return nil, unfit{err}
		}
		if len(net.TrunkStats()) > 0 && len(d.Tasks()) == 1 {
			// One task's network is the whole of models.Independent, and
			// it keeps its batch norms' statistics as its own trunk.
			return net, nil
		}
		if len(net.TrunkStats()) > 0 {
			// The running statistics of batch norms belong to a trunk;
			// models.Independent has none.
			return nil, unfit{fmt.Errorf("-method %s is not available with %s (batch normalisation in independent networks)%s", s.Method, s.Model, oneTaskHint(method))}
		}
		nets = append(nets, net)
	}
	return models.Independent{Nets: nets}, nil
}

// engineConfig is the ensemble configuration for the settings, the
// components the caller built and a data set.
func (s Settings) engineConfig(d data.Dataset, c Components) (*engine.Config, error) {
	m, err := c.model(s, d)
	if err != nil {
		return nil, err
	}
	// A graph holds a batch's rows: on a training split smaller than a
	// batch, rows beyond it would be computed and weighed zero, on every
	// step and evaluation (most of an epoch's time on a table of 15 rows).
	batch := min(s.Batch, max(1, d.Len()))
	return &engine.Config{Model: m, Tasks: d.Tasks(), Batch: batch, Dtype: s.Dtype.Tensor(), Device: c.Device}, nil
}
