package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	_ "github.com/mtsgd/mtsgd/internal/openblas" // OpenBLAS when built with -tags openblas
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/particles/toy"
)

// Options is everything a run depends on: the settings a checkpoint
// records, and how this invocation runs them.
type Options struct {
	experiment.Settings

	Out      string
	Progress bool

	// Toy problems.
	Steps int

	// Networks.
	DataDir         string // where data sets are looked for; see data.Dir
	Data            string // the file data set's directory (-data), which Settings.Files records
	Preview         string // write a preview PNG of the training set here and exit
	Stats           bool   // print data set sizes and label histograms and exit
	Workers         int
	Device          string // where the training graphs run: cpu or cuda
	Resume          string // continue the run in this directory
	CheckpointEvery int    // also save DIR/last every this many steps
	BestMetric      string // selects DIR/best
	LogQP           bool   // log MT-SGD's QP (weights, certificate) every step
	Overwrite       bool   // train into an Out that holds a run, replacing it

	filesRead    *filesFlags                   // how -data's files are read
	choices      choiceFlags                   // the settings' named choices as given
	methodParams map[string]map[string]float64 // -METHOD-PARAM as given: method → parameter → value
	// keepCheckpointEvery: -resume without -checkpoint-every keeps the
	// run's own (the checkpoint records it).
	keepCheckpointEvery bool
}

// choiceFlags are the flags of the settings' named choices as the command
// line spells them; readChoices reads them into Settings.
type choiceFlags struct {
	optimizer, schedule, dtype, scoreScale, uTerms, kernelOn, order string
}

// readChoices reads the named choices of the command line into o's
// settings, each once, refusing a name that is not a choice. A flag not
// given reads as unnamed, which applyDefaults replaces, but for -dtype,
// whose flag has its own default.
func (o *Options) readChoices() error {
	c := o.choices
	var err error
	read := func(parse func() error) {
		if err == nil {
			err = parse()
		}
	}
	read(func() (err error) { o.Optimizer, err = experiment.ParseOptimizer(c.optimizer); return err })
	read(func() (err error) { o.Schedule, err = experiment.ParseSchedule(c.schedule); return err })
	read(func() (err error) { o.Dtype, err = experiment.ParseDtype(c.dtype); return err })
	read(func() (err error) { o.ScoreScale, err = experiment.ParseScoreScale(c.scoreScale); return err })
	read(func() (err error) { o.UTerms, err = experiment.ParseUTerms(c.uTerms); return err })
	read(func() (err error) { o.KernelOn, err = experiment.ParseKernelSpace(c.kernelOn); return err })
	read(func() (err error) { o.Order, err = experiment.ParseUpdateOrder(c.order); return err })
	return err
}

// Flags that only one kind of data set reads, and those a resumed run may
// change (the others are fixed by its checkpoint).
var (
	toyFlags     = []string{"steps"}
	networkFlags = []string{"data", "model", "hidden", "data-dir", "preview", "stats", "epochs", "batch", "tasks", "train-limit", "test-limit", "warmup",
		"head-repulsion", "preset", "score-scale", "u-terms", "kernel-on", "order", "valid", "lr-schedule", "lr-milestones", "lr-gamma", "lr-every", "workers", "device", "dtype",
		"resume", "checkpoint-every", "best-metric", "log-qp", "overwrite"}
	resumeFlags = []string{"resume", "epochs", "workers", "device", "data-dir", "data", "progress", "checkpoint-every", "best-metric", "log-qp"}
)

func main() {
	cli.Main(cli.Command[Options]{Name: "train", Parse: parseFlags, Run: run, Explain: explain})
}

// explain says how to go on after an interruption; other errors are
// logged as they are.
func explain(o Options, err error) bool {
	switch {
	case errors.Is(err, experiment.ErrInterrupted):
		log.WithField("checkpoint", filepath.Join(o.Out, "last")).Warn("interrupted; continue with: train -resume " + o.Out)
	case errors.Is(err, errLoadInterrupted):
		log.Warn(err.Error() + "; run the same command again")
	default:
		return false
	}
	return true
}

// parseFlags reads the command line into Options and checks it: a
// resumed run's few flags, or a new run's, the flags not given taking the
// data set's defaults.
func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := sysmem.CheckEnv(); err != nil {
		return o, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := o.filesRead.check(set); err != nil {
		return o, err
	}
	if o.Resume != "" {
		return resumeOptions(o, set)
	}
	return newRunOptions(o, set)
}

// newFlagSet declares train's flags into o.
func newFlagSet(o *Options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: train -dataset NAME [flags]   (see `go doc ./cmd/train`)")
		fmt.Fprintln(stderr, "       train -resume DIR [-epochs N] [-workers N] [-data-dir DIR] [-data DIR]")
		fs.PrintDefaults()
	}
	cli.SettingsFlags(fs, cli.Settings{Dataset: &o.Dataset, Particles: &o.Particles, LR: &o.LR, Optimizer: &o.choices.optimizer,
		Epochs: &o.Epochs, TrainLimit: &o.TrainLimit, TestLimit: &o.TestLimit}, cli.SettingsHelp{
		Dataset:    strings.Join(datasetNames(), ", ") + "; required",
		Particles:  "default 50 for toy problems, 5 for networks",
		LR:         "default 0.03 toy problems; " + byDataset(func(s experiment.Settings) any { return s.LR }),
		Optimizer:  "default adam toy problems; " + byDataset(func(s experiment.Settings) any { return s.Optimizer }),
		Epochs:     "networks; default " + byDataset(func(s experiment.Settings) any { return s.Epochs }),
		TrainLimit: "networks; default " + byDataset(func(s experiment.Settings) any { return s.TrainLimit }),
		TestLimit:  "networks",
	})
	fs.StringVar(&o.Method, "method", experiment.DefaultMethod, methodUsage())
	fs.BoolVar(&o.Repel, "repel", false, "a method whose particles move independently becomes a particle method: its trunk directions drive an SVGD step with the RBF kernel across the particles, weight -repulsion")
	methodParamFlags(fs, o)
	fs.Float64Var(&o.Momentum, "momentum", 0.9, "SGD momentum (with -optimizer sgd)")
	fs.Float64Var(&o.KernelScale, "kernel-scale", 1, "multiplies the median-heuristic RBF bandwidth")
	fs.Float64Var(&o.Repulsion, "repulsion", 1, "weight of the kernel-gradient (repulsive) term; for networks, of the trunks' (default 1 toy problems; networks: the score scale's, see -score-scale)")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed: fixes data generation, initialisation and shuffling")
	cli.Out(fs, "output directory (default runs/DATASET-METHOD-seedN; -data DIR: runs/NAME-HASH-METHOD-seedN, NAME the last element of DIR, HASH 6 hex digits of the SHA-256 of its absolute path)", func(v string) error { o.Out = v; return nil })
	cli.Progress(fs, &o.Progress)

	fs.IntVar(&o.Steps, "steps", 1000, "toy problems: optimiser steps")

	cli.Data(fs, &o.Data, "networks: train on your own data: the directory of train.npz (optionally valid.npz, test.npz) and tasks.json (go doc ./data/files); implies -dataset "+files.Name+"; with -resume, the directory a run's files have moved to")
	o.filesRead = addFilesFlags(fs)
	fs.StringVar(&o.Model, "model", "", "networks: the model, "+strings.Join(experiment.ModelNames(), ", ")+" (default: the data set's; "+files.Name+": picked from the input shape)")
	fs.StringVar(&o.Hidden, "hidden", "", "networks, -model mlp: hidden layer widths separated by commas (default "+joinInts(experiment.MLPHidden)+"; a new -data run on vectors from "+strconv.Itoa(experiment.TableHiddenFrom)+" to "+strconv.Itoa(experiment.TableHiddenTo)+" training rows: two layers as wide as the input, 128 to 256)")
	cli.DataDir(fs, &o.DataDir, "networks")
	fs.StringVar(&o.Preview, "preview", "", "networks: write a grid of 16 training examples with their labels to this PNG file and exit")
	fs.BoolVar(&o.Stats, "stats", false, "networks: print the data sets' sizes and label histograms and exit")
	fs.IntVar(&o.Batch, "batch", 0, "networks: examples per step (default "+byDataset(func(s experiment.Settings) any { return s.Batch })+")")
	fs.StringVar(&o.Tasks, "tasks", "", strings.Join(experiment.DatasetsWith(choosesTasks), ", ")+": the first N tasks, or task names separated by commas (default "+byDataset(func(s experiment.Settings) any {
		return s.Tasks
	}, choosesTasks)+")")
	fs.IntVar(&o.Warmup, "warmup", 0, "networks: epochs of plain gradient steps (no kernel) before the update rule (default: the preset's)")
	fs.Float64Var(&o.HeadRepulsion, "head-repulsion", 0, "networks: weight of the kernel-gradient term of the heads' svgd (default: the score scale's, see -score-scale)")
	fs.StringVar(&o.Preset, "preset", "", "networks: MT-SGD choices: "+presetNames()+" (default "+experiment.DefaultPreset+")")
	fs.StringVar(&o.choices.scoreScale, "score-scale", "", "networks: scores as the gradient of the batch-mean loss (mean), times N (sum), or normalised per coordinate across particles (normalized) (default: the preset's)")
	fs.StringVar(&o.choices.uTerms, "u-terms", "", "networks: MT-SGD's U with all four terms (full) or the first only (first) (default: the preset's)")
	fs.StringVar(&o.choices.kernelOn, "kernel-on", "", "networks: the kernels compare the parameters (params) or the trunk's features and the heads' outputs on the batch (outputs) (default: the preset's)")
	fs.StringVar(&o.choices.order, "order", "", "networks: one gradient evaluation moves trunks and heads (joint), or the heads move first and the trunks' gradients go through them (heads-first) (default: the preset's)")
	fs.IntVar(&o.Valid, "valid", 0, strings.Join(experiment.DatasetsWith(holdsOut), ", ")+": training examples held out for validation (0: none; default "+byDataset(func(s experiment.Settings) any {
		return s.Valid
	}, holdsOut)+")")
	fs.StringVar(&o.choices.schedule, "lr-schedule", "", "networks: learning-rate schedule: multistep, exponential or constant (default "+byDataset(func(s experiment.Settings) any { return s.Schedule })+")")
	fs.StringVar(&o.Milestones, "lr-milestones", "15,30,45,60,75,90", "networks: multistep: epochs at which the rate is multiplied by -lr-gamma")
	fs.Float64Var(&o.Gamma, "lr-gamma", 0, "networks: factor of each learning-rate decay (default "+byDataset(func(s experiment.Settings) any { return s.Gamma })+")")
	fs.IntVar(&o.Every, "lr-every", 0, "networks: exponential: epochs between decays (default "+byDataset(func(s experiment.Settings) any { return s.Every })+")")
	cli.Workers(fs, &o.Workers, "networks")
	cli.Device(fs, &o.Device, "networks")
	fs.StringVar(&o.choices.dtype, "dtype", "float32", "networks: float32 or float64 graphs")
	fs.StringVar(&o.Resume, "resume", "", "networks: continue the run whose output directory is DIR, from DIR/last")
	fs.IntVar(&o.CheckpointEvery, "checkpoint-every", 0, "networks: also save DIR/last every N steps (0: at each epoch's end only)")
	fs.BoolVar(&o.LogQP, "log-qp", false, "networks, mtsgd: log every step's min-norm QP: K, the weights w*, the duality gap and whether it is certified")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "networks: train into a -out that holds a run (last/, best/, metrics.jsonl), replacing it")
	fs.StringVar(&o.BestMetric, "best-metric", "", "networks: metric that selects DIR/best on the validation split (without one, DIR/best is the last epoch): "+strings.Join(experiment.BestMetrics, ", ")+"; a regression task counts by its MSE under mse, else by its Gaussian NLL at the estimated variance; proper: each task's NLL (a regression task's MSE) as a fraction of its epoch-1 value, the last epoch on fewer than "+strconv.Itoa(experiment.MinProperExamples)+" validation examples (default "+byDataset(func(s experiment.Settings) any {
		return experiment.DefaultBest(s.Dataset)
	})+")")
	return fs
}

// resumeOptions checks the flags of train -resume: the checkpoint fixes
// all but those that say how to run.
func resumeOptions(o Options, set map[string]bool) (Options, error) {
	for name := range set {
		if !slices.Contains(resumeFlags, name) {
			return o, fmt.Errorf("-%s cannot be given with -resume: the checkpoint fixes it", name)
		}
	}
	dir, err := resumeDir(o.Resume)
	if err != nil {
		return o, err
	}
	o.Resume, o.Out = dir, dir
	o.keepCheckpointEvery = !set["checkpoint-every"]
	if !set["epochs"] {
		o.Epochs = 0 // keep the checkpoint's
	} else if o.Epochs < 1 {
		// 0 would otherwise read as "keep the checkpoint's".
		return o, fmt.Errorf("-epochs must be at least 1, got %d", o.Epochs)
	}
	return o, nil
}

// newRunOptions checks a new run's flags and gives those not set the
// data set's defaults (experiment.Defaults; for toy problems 50
// particles and Adam at 0.03), a preset's, or the score scale's.
func newRunOptions(o Options, set map[string]bool) (Options, error) {
	if set["data"] {
		switch o.Dataset {
		case "":
			o.Dataset = files.Name
		case files.Name:
		default:
			return o, fmt.Errorf("-data DIR trains on the files in DIR; it cannot be given with -dataset %s", o.Dataset)
		}
		abs, err := filepath.Abs(o.Data)
		if err != nil {
			return o, fmt.Errorf("-data: %w", err)
		}
		// The checkpoint records the directory: absolute, so that eval
		// and train -resume find it from anywhere.
		o.Files = o.filesRead.spec(abs)
	}
	if o.Dataset == "" {
		return o, fmt.Errorf("-dataset is required (%s), or -data DIR for your own files", strings.Join(datasetNames(), ", "))
	}
	// An unknown data set first: the flags that follow are judged by
	// its kind, and a misspelt name would make them look wrong instead.
	if !slices.Contains(datasetNames(), o.Dataset) {
		return o, fmt.Errorf("-dataset %q is not one of %s", o.Dataset, strings.Join(datasetNames(), ", "))
	}
	network := isNetwork(o.Dataset)
	wrong, kind := networkFlags, "network data sets"
	if network {
		wrong, kind = toyFlags, "toy problems"
	}
	for _, name := range wrong {
		if set[name] {
			return o, fmt.Errorf("-%s does not apply to -dataset %s: it is for %s", name, o.Dataset, kind)
		}
	}
	if m, err := experiment.LookupMethod(o.Method); !network && (err != nil || !m.Toy) {
		return o, fmt.Errorf("-method %q is not one for toy problems (%s)", o.Method, strings.Join(toyMethods(), ", "))
	}
	if err := o.readChoices(); err != nil {
		return o, err
	}
	for method, params := range o.methodParams {
		if method != o.Method {
			for name := range params {
				return o, fmt.Errorf("-%s-%s is a parameter of -method %s, not of %s", method, name, method, o.Method)
			}
		}
		o.MethodParams = params
	}
	d, err := applyDefaults(&o, set, network)
	if err != nil {
		return o, err
	}
	if o.Out == "" {
		name := o.Dataset
		if o.Files != nil {
			name = dataName(o.Files.Dir)
		}
		o.Out = fmt.Sprintf("runs/%s-%s-seed%d", name, o.Method, o.Seed)
	}
	if !set["model"] {
		o.Model = d.Model
	} else if _, err := experiment.LookupModel(o.Model); err != nil {
		return o, fmt.Errorf("-%w", err)
	}
	if o.Hidden != "" && o.Model != "mlp" && o.Model != "" {
		return o, fmt.Errorf("-hidden sizes the mlp's layers; the model is %s", o.Model)
	}
	if err := o.check(); err != nil {
		return o, err
	}
	return o, conflicts(o, set)
}

// applyDefaults gives the flags of o not set the data set's defaults
// (experiment.Defaults; for toy problems 50 particles and Adam at 0.03),
// changed by -preset and -score-scale where given, and returns those
// defaults.
func applyDefaults(o *Options, set map[string]bool, network bool) (experiment.Settings, error) {
	d := experiment.Defaults(o.Dataset).ForMethod(o.Method)
	if !network {
		d.Particles, d.LR, d.Optimizer = 50, 0.03, experiment.OptimizerAdam
		d.Repulsion = 1
	}
	if set["preset"] {
		p, err := experiment.LookupPreset(o.Preset)
		if err != nil {
			return d, fmt.Errorf("-preset: %w", err)
		}
		p.Apply(&d)
	}
	if set["score-scale"] {
		// The repulsion weights follow the scale unless given.
		d.ScoreScale, d.Repulsion, d.HeadRepulsion = o.ScoreScale, experiment.AutoRepulsion, experiment.AutoRepulsion
	}
	for name, apply := range map[string]func(){
		"preset":         func() { o.Preset = d.Preset },
		"score-scale":    func() { o.ScoreScale = d.ScoreScale },
		"u-terms":        func() { o.UTerms = d.UTerms },
		"kernel-on":      func() { o.KernelOn = d.KernelOn },
		"order":          func() { o.Order = d.Order },
		"warmup":         func() { o.Warmup = d.Warmup },
		"repulsion":      func() { o.Repulsion = d.Repulsion },
		"head-repulsion": func() { o.HeadRepulsion = d.HeadRepulsion },
		"valid":          func() { o.Valid = d.Valid },
		"particles":      func() { o.Particles = d.Particles },
		"lr":             func() { o.LR = d.LR },
		"optimizer":      func() { o.Optimizer = d.Optimizer },
		"epochs":         func() { o.Epochs = d.Epochs },
		"batch":          func() { o.Batch = d.Batch },
		"lr-schedule":    func() { o.Schedule = d.Schedule },
		"lr-gamma":       func() { o.Gamma = d.Gamma },
		"lr-every":       func() { o.Every = d.Every },
		"tasks":          func() { o.Tasks = d.Tasks },
		"train-limit":    func() { o.TrainLimit = d.TrainLimit },
		"best-metric":    func() { o.BestMetric = experiment.DefaultBest(o.Dataset) },
	} {
		if !set[name] {
			apply()
		}
	}
	return d, nil
}

// conflicts refuses flags given together where one would be ignored, so
// that a run does not silently differ from what its command line says.
// set holds the flags given explicitly.
func conflicts(o Options, set map[string]bool) error {
	switch {
	case o.Stats && o.Preview != "":
		return errors.New("-stats and -preview cannot be given together: each prints its own report and exits")
	case set["momentum"] && o.Optimizer != experiment.OptimizerSGD:
		return fmt.Errorf("-momentum applies to -optimizer sgd only; the optimizer is %s", o.Optimizer)
	case set["lr-milestones"] && o.Schedule != experiment.ScheduleMultiStep:
		return fmt.Errorf("-lr-milestones applies to -lr-schedule multistep only; the schedule is %s", o.Schedule)
	}
	return nil
}

// resumeDir is the run directory -resume names: dir itself, or, when dir
// is a run's last/ checkpoint (as eval accepts), the run around it. Any
// other checkpoint directory (best/, a copy) is refused: resuming writes
// the run's last/, which must be the checkpoint resumed from.
func resumeDir(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, checkpoints.ManifestName)); err != nil {
		return dir, nil // a run directory, or nothing: run says which
	}
	clean := filepath.Clean(dir)
	if filepath.Base(clean) == "last" {
		return filepath.Dir(clean), nil
	}
	return "", fmt.Errorf("-resume %s: this is a checkpoint, not a run directory; give the run directory (or its last/), or copy the checkpoint to RUN/last", dir)
}

// presetNames lists the presets for the help text.
func presetNames() string {
	var n []string
	for _, p := range experiment.Presets {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}

// isNetwork tells whether dataset trains networks (rather than toy particles).
func isNetwork(dataset string) bool {
	return slices.Contains(experiment.Datasets(), dataset)
}

func (o Options) check() error {
	switch {
	case !slices.Contains(datasetNames(), o.Dataset):
		return fmt.Errorf("-dataset %q is not one of %s", o.Dataset, strings.Join(datasetNames(), ", "))
	case o.Steps < 1:
		return fmt.Errorf("-steps must be at least 1, got %d", o.Steps)
	}
	if err := o.checkRunning(); err != nil {
		return err
	}
	if err := o.Settings.Check(); err != nil {
		return err
	}
	p, err := toy.Lookup(o.Dataset)
	if err != nil {
		// A network run's size depends on its data, checked once loaded
		// (experiment.New); a toy run's is known from the flags.
		return nil
	}
	m, err := experiment.LookupMethod(o.Method)
	if err != nil {
		return err
	}
	return sysmem.Check([]sysmem.Part{{What: "particles and kernel matrices", Setting: fmt.Sprintf("-particles %d", o.Particles),
		Bytes: toy.Memory(p, o.Particles, m.Kernels)}})
}

// checkRunning checks the options that say how to run, which a resumed
// run may change.
func (o Options) checkRunning() error {
	switch {
	case o.Workers < 1:
		return fmt.Errorf("-workers must be at least 1, got %d", o.Workers)
	case o.Device != "cpu" && o.Device != "cuda":
		return fmt.Errorf("-device must be cpu or cuda, got %q", o.Device)
	case o.CheckpointEvery < 0:
		return fmt.Errorf("-checkpoint-every must be 0 or positive, got %d", o.CheckpointEvery)
	case o.BestMetric != "" && !slices.Contains(experiment.BestMetrics, o.BestMetric):
		return fmt.Errorf("-best-metric must be one of %s, got %q", strings.Join(experiment.BestMetrics, ", "), o.BestMetric)
	}
	return nil
}

// run trains as o says and writes the results to o.Out.
func run(ctx context.Context, o Options) error {
	sysmem.CollectEarly()
	if o.Resume != "" {
		return resumeNetwork(ctx, o)
	}
	if err := o.check(); err != nil {
		return err
	}
	if isNetwork(o.Dataset) {
		return runNetwork(ctx, o)
	}
	return runToy(ctx, o)
}

// methodUsage is -method's help: every method with its help line, and
// which of them move the toy problems' points.
func methodUsage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "method; on toy problems %s only:", strings.Join(toyMethods(), ", "))
	for _, m := range experiment.Methods() {
		fmt.Fprintf(&b, "\n  %-10s  %s", m.Name, m.Help)
	}
	return b.String()
}

// methodParamFlags declares -METHOD-PARAM for every parameter of every
// registered method (experiment.Method.Params), read into o.methodParams.
func methodParamFlags(fs *flag.FlagSet, o *Options) {
	for _, m := range experiment.Methods() {
		for _, p := range m.Params {
			fs.Func(m.Name+"-"+p.Name, fmt.Sprintf("-method %s: %s (default %v)", m.Name, p.Help, p.Default), func(v string) error {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("%q is not a number", v)
				}
				if o.methodParams == nil {
					o.methodParams = map[string]map[string]float64{}
				}
				if o.methodParams[m.Name] == nil {
					o.methodParams[m.Name] = map[string]float64{}
				}
				o.methodParams[m.Name][p.Name] = x
				return nil
			})
		}
	}
}

// toyMethods lists the methods that move the toy problems' points.
func toyMethods() []string {
	return experiment.MethodNames(func(m experiment.Method) bool { return m.Toy })
}

// byDataset says, for the help, what value of a setting each network data
// set (those keep returns true for, all if none is given) takes by
// default, the data sets with the same value together:
// "256 multi-mnist, multi-fashion; 512 sarcos", or the value alone when
// they all take it.
func byDataset(value func(experiment.Settings) any, keep ...func(experiment.Dataset) bool) string {
	var values []string
	names := map[string][]string{}
	for _, name := range experiment.DatasetsWith(func(d experiment.Dataset) bool { return len(keep) == 0 || keep[0](d) }) {
		v := fmt.Sprint(value(experiment.Defaults(name)))
		if _, seen := names[v]; !seen {
			values = append(values, v)
		}
		names[v] = append(names[v], name)
	}
	if len(values) == 1 {
		return values[0] // the same everywhere
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = v + " " + strings.Join(names[v], ", ")
	}
	return strings.Join(parts, "; ")
}

// choosesTasks and holdsOut tell the data sets that take -tasks and
// -valid.
func choosesTasks(d experiment.Dataset) bool { return d.CheckTasks != nil }
func holdsOut(d experiment.Dataset) bool     { return d.CheckValid != nil }

// datasetNames lists every -dataset the command knows.
func datasetNames() []string {
	return append(toy.Names(), experiment.Datasets()...)
}

// joinInts writes v as a comma-separated list.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
