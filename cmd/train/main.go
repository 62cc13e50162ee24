// Command train moves an ensemble of particles towards several targets with
// MT-SGD (Phan et al., NeurIPS 2022) or one of its baselines: points on the
// paper's toy problems, or multi-task networks on its image data sets.
//
// Usage:
//
//	train -dataset NAME [flags]
//
// Data sets:
//
//	mog3   three mixtures of two 2-D Gaussians (the paper's Section 4.1.1);
//	       particles start from N(0, 5·I)
//	zdt3   the two ZDT3 objectives on [0,1]^30 as targets exp(−f_k)
//	       (Section 4.1.2); particles start uniform on the box and are
//	       clipped to [1e-6, 1−1e-6] after every step
//	multi-mnist, multi-fashion, multi-fashion-mnist
//	       two-task 36×36 composites of MNIST and Fashion-MNIST images
//	       (Section 4.2), built from the raw IDX files (package
//	       data/multimnist); each particle is a LeNet (package
//	       models/lenet). Get the files with scripts/fetch-data.
//
// Methods (-method): mtsgd, svgd, moo-svgd, mgda, linear; see package
// particles. svgd and linear weight the targets equally. On networks the
// method moves the trunks; each task's heads move by svgd on that task.
//
// Flags for every data set:
//
//	-dataset NAME       data set (required)
//	-method NAME        update rule (default mtsgd)
//	-particles M        number of particles (default 50 toy, 5 networks)
//	-lr RATE            learning rate (default 0.03 toy, 0.001 networks)
//	-optimizer NAME     adam or sgd (default adam toy, sgd networks)
//	-momentum MU        SGD momentum (default 0.9)
//	-kernel-scale S     multiplies the median-heuristic RBF bandwidth (default 1)
//	-repulsion RHO      weight of the kernel-gradient term; on networks, of
//	                    the trunks' rule (default 1)
//	-seed N             fixes data generation, initialisation and shuffling
//	                    (default 1)
//	-out DIR            output directory (default runs/DATASET-METHOD-seedN)
//	-progress           progress bar on a terminal, else a log line every
//	                    tenth of the run or epoch (default true)
//
// Toy problems:
//
//	-steps N            optimiser steps (default 1000)
//
// Networks (defaults: the paper's Multi-MNIST setup):
//
//	-epochs N           passes over the training set (default 100)
//	-batch N            examples per step (default 256)
//	-lr-schedule NAME   multistep, exponential or constant (default multistep)
//	-lr-milestones L    multistep: epochs at which the rate is multiplied by
//	                    -lr-gamma (default 15,30,45,60,75,90)
//	-lr-gamma G         factor of each decay (default 0.5)
//	-lr-every N         exponential: epochs between decays (default 1)
//	-warmup N           first N epochs without kernel: plain gradient steps,
//	                    the trunk of particle i following the mix
//	                    i/(M−1)·task 1 + (1 − i/(M−1))·task 2 (default 0)
//	-head-repulsion RHO weight of the heads' kernel-gradient term (default 1)
//	-train-limit N      train on the first N training examples (default all)
//	-test-limit N       evaluate on the first N test examples (default all)
//	-data-dir DIR       where data sets are looked for (default
//	                    $MTSGD_DATA_DIR, else ~/.cache/mtsgd)
//	-workers N          graphs run at once (default GOMAXPROCS)
//	-dtype T            float32 or float64 graphs (default float32)
//	-preview FILE       write a 4×4 grid of training examples with their
//	                    labels to FILE (PNG) and exit
//	-stats              print both splits' sizes and label histograms and exit
//
// Toy problems write DIR/particles.csv (header particle,theta_0,…, one row
// per particle, final positions) and DIR/particles.png (mog3: the particles
// over the three densities' contours; zdt3: the particles in objective space
// over the true Pareto front), and log where the particles ended.
//
// Networks are scored on the test set after every epoch: one log line per
// task with the ensemble's accuracy, Brier score, ECE and NLL (the ensemble
// predicts the mean of the particles' probabilities), and one JSON object
// per task and epoch in DIR/metrics.jsonl, with every particle's scores too.
// The last epoch also logs each particle's scores. A NaN or Inf in a loss,
// gradient or update direction stops training with an error naming the
// step, particle and task.
//
// Examples:
//
//	train -dataset mog3 -method mtsgd -particles 50 -steps 1000 -lr 0.03 -seed 1 -out runs/mog3
//	train -dataset multi-mnist -particles 5 -epochs 1 -lr 0.01 -seed 1 -out runs/mm1
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/multimnist"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/toy"
)

// Options is everything a run depends on.
type Options struct {
	Dataset     string
	Method      string
	Particles   int
	LR          float64
	Optimizer   string
	Momentum    float64
	KernelScale float64
	Repulsion   float64
	Seed        uint64
	Out         string
	Progress    bool

	// Toy problems.
	Steps int

	// Networks.
	DataDir       string // where data sets are looked for; see data.Dir
	Preview       string // write a preview PNG of the training set here and exit
	Stats         bool   // print data set sizes and label histograms and exit
	Epochs        int
	Batch         int
	TrainLimit    int // use the first N training examples; 0: all
	TestLimit     int // use the first N test examples; 0: all
	Warmup        int // epochs of plain gradient steps before the kernel
	HeadRepulsion float64
	Schedule      string // multistep, exponential or constant
	Milestones    string // multistep: comma-separated epochs
	Gamma         float64
	Every         int // exponential: epochs between decays
	Workers       int
	Dtype         string
}

// Flags that only one kind of data set reads.
var (
	toyFlags     = []string{"steps"}
	networkFlags = []string{"data-dir", "preview", "stats", "epochs", "batch", "train-limit", "test-limit", "warmup",
		"head-repulsion", "lr-schedule", "lr-milestones", "lr-gamma", "lr-every", "workers", "dtype"}
)

// kindDefaults are the defaults that differ between toy problems and
// networks: the paper's settings for each (Adam at 3e-2 on the toys; SGD
// with momentum at 1e-3 and five particles on Multi-MNIST).
var kindDefaults = map[bool]struct {
	particles int
	lr        float64
	optimizer string
}{
	false: {50, 0.03, "adam"},
	true:  {5, 1e-3, "sgd"},
}

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts); err != nil {
		log.Error(err)
		os.Exit(1)
	}
}

// parseFlags reads the command line into Options and checks it.
func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: train -dataset NAME [flags]   (see `go doc ./cmd/train`)")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Dataset, "dataset", "", "data set: "+strings.Join(datasetNames(), ", ")+" (required)")
	fs.StringVar(&o.Method, "method", "mtsgd", "update rule: "+strings.Join(particles.Methods, ", ")+" (networks: the trunks' rule; heads use svgd)")
	fs.IntVar(&o.Particles, "particles", 0, "number of particles (default 50 for toy problems, 5 for networks)")
	fs.Float64Var(&o.LR, "lr", 0, "learning rate (default 0.03 for toy problems, 0.001 for networks)")
	fs.StringVar(&o.Optimizer, "optimizer", "", "optimiser: adam or sgd (default adam for toy problems, sgd for networks)")
	fs.Float64Var(&o.Momentum, "momentum", 0.9, "SGD momentum (with -optimizer sgd)")
	fs.Float64Var(&o.KernelScale, "kernel-scale", 1, "multiplies the median-heuristic RBF bandwidth")
	fs.Float64Var(&o.Repulsion, "repulsion", 1, "weight of the kernel-gradient (repulsive) term; for networks, of the trunks'")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed: fixes data generation, initialisation and shuffling")
	fs.StringVar(&o.Out, "out", "", "output directory (default runs/DATASET-METHOD-seedN)")
	fs.BoolVar(&o.Progress, "progress", true, "show a progress bar on stderr")

	fs.IntVar(&o.Steps, "steps", 1000, "toy problems: optimiser steps")

	fs.StringVar(&o.DataDir, "data-dir", "", "networks: data directory (default $"+data.DirEnv+", else ~/.cache/mtsgd)")
	fs.StringVar(&o.Preview, "preview", "", "networks: write a grid of 16 training examples with their labels to this PNG file and exit")
	fs.BoolVar(&o.Stats, "stats", false, "networks: print the data sets' sizes and label histograms and exit")
	fs.IntVar(&o.Epochs, "epochs", 100, "networks: passes over the training set")
	fs.IntVar(&o.Batch, "batch", 256, "networks: examples per step")
	fs.IntVar(&o.TrainLimit, "train-limit", 0, "networks: train on the first N training examples only (0: all)")
	fs.IntVar(&o.TestLimit, "test-limit", 0, "networks: evaluate on the first N test examples only (0: all)")
	fs.IntVar(&o.Warmup, "warmup", 0, "networks: epochs of plain gradient steps (no kernel) before the update rule")
	fs.Float64Var(&o.HeadRepulsion, "head-repulsion", 1, "networks: weight of the kernel-gradient term of the heads' svgd")
	fs.StringVar(&o.Schedule, "lr-schedule", "multistep", "networks: learning-rate schedule: multistep, exponential or constant")
	fs.StringVar(&o.Milestones, "lr-milestones", "15,30,45,60,75,90", "networks: multistep: epochs at which the rate is multiplied by -lr-gamma")
	fs.Float64Var(&o.Gamma, "lr-gamma", 0.5, "networks: factor of each learning-rate decay")
	fs.IntVar(&o.Every, "lr-every", 1, "networks: exponential: epochs between decays")
	fs.IntVar(&o.Workers, "workers", runtime.GOMAXPROCS(0), "networks: graphs run at once")
	fs.StringVar(&o.Dtype, "dtype", "float32", "networks: float32 or float64 graphs")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Dataset == "" {
		return o, fmt.Errorf("-dataset is required (%s)", strings.Join(datasetNames(), ", "))
	}
	network := isNetwork(o.Dataset)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	wrong, kind := networkFlags, "network data sets"
	if network {
		wrong, kind = toyFlags, "toy problems"
	}
	for _, name := range wrong {
		if set[name] {
			return o, fmt.Errorf("-%s does not apply to -dataset %s: it is for %s", name, o.Dataset, kind)
		}
	}
	d := kindDefaults[network]
	if !set["particles"] {
		o.Particles = d.particles
	}
	if !set["lr"] {
		o.LR = d.lr
	}
	if !set["optimizer"] {
		o.Optimizer = d.optimizer
	}
	if o.Out == "" {
		o.Out = fmt.Sprintf("runs/%s-%s-seed%d", o.Dataset, o.Method, o.Seed)
	}
	return o, o.check()
}

// isNetwork tells whether dataset trains networks (rather than toy particles).
func isNetwork(dataset string) bool {
	_, ok := multimnist.Lookup(dataset)
	return ok
}

func (o Options) check() error {
	switch {
	case !slices.Contains(datasetNames(), o.Dataset):
		return fmt.Errorf("-dataset %q is not one of %s", o.Dataset, strings.Join(datasetNames(), ", "))
	case o.Particles < 1:
		return fmt.Errorf("-particles must be at least 1, got %d", o.Particles)
	case o.Steps < 1:
		return fmt.Errorf("-steps must be at least 1, got %d", o.Steps)
	case !(o.LR > 0):
		return fmt.Errorf("-lr must be positive, got %v", o.LR)
	case o.Optimizer != "adam" && o.Optimizer != "sgd":
		return fmt.Errorf("-optimizer must be adam or sgd, got %q", o.Optimizer)
	case o.Momentum < 0 || o.Momentum >= 1:
		return fmt.Errorf("-momentum must be in [0, 1), got %v", o.Momentum)
	case !(o.KernelScale > 0):
		return fmt.Errorf("-kernel-scale must be positive, got %v", o.KernelScale)
	case o.Repulsion < 0:
		return fmt.Errorf("-repulsion must be non-negative, got %v", o.Repulsion)
	case o.HeadRepulsion < 0:
		return fmt.Errorf("-head-repulsion must be non-negative, got %v", o.HeadRepulsion)
	case o.Epochs < 1:
		return fmt.Errorf("-epochs must be at least 1, got %d", o.Epochs)
	case o.Batch < 1:
		return fmt.Errorf("-batch must be at least 1, got %d", o.Batch)
	case o.TrainLimit < 0 || o.TestLimit < 0:
		return fmt.Errorf("-train-limit and -test-limit must be 0 (all) or positive")
	case o.Warmup < 0:
		return fmt.Errorf("-warmup must be 0 or more epochs, got %d", o.Warmup)
	case !(o.Gamma > 0):
		return fmt.Errorf("-lr-gamma must be positive, got %v", o.Gamma)
	case o.Every < 1:
		return fmt.Errorf("-lr-every must be at least 1, got %d", o.Every)
	case o.Workers < 1:
		return fmt.Errorf("-workers must be at least 1, got %d", o.Workers)
	case o.Dtype != "float32" && o.Dtype != "float64":
		return fmt.Errorf("-dtype must be float32 or float64, got %q", o.Dtype)
	}
	if _, err := o.schedule(); err != nil {
		return err
	}
	return nil
}

// newOptimizer returns a fresh optimiser as the options describe.
func (o Options) newOptimizer() optim.Optimizer {
	if o.Optimizer == "sgd" {
		return &optim.SGD{LR: o.LR, Momentum: o.Momentum}
	}
	return optim.NewAdam(o.LR)
}

// schedule is the learning-rate schedule the options describe.
func (o Options) schedule() (optim.Schedule, error) {
	switch o.Schedule {
	case "constant":
		return optim.Constant(o.LR), nil
	case "exponential":
		return optim.Exponential{Base: o.LR, Gamma: o.Gamma, Every: o.Every}, nil
	case "multistep":
		ms, err := optim.ParseMilestones(o.Milestones)
		if err != nil {
			return nil, fmt.Errorf("-lr-milestones: %w", err)
		}
		return optim.MultiStep{Base: o.LR, Milestones: ms, Gamma: o.Gamma}, nil
	}
	return nil, fmt.Errorf("-lr-schedule must be multistep, exponential or constant, got %q", o.Schedule)
}

// run trains as o says and writes the results to o.Out.
func run(ctx context.Context, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	rule, err := particles.New(o.Method, particles.Config{
		Kernel:    particles.RBF{Scale: o.KernelScale},
		Repulsion: o.Repulsion,
	})
	if err != nil {
		return err
	}
	if isNetwork(o.Dataset) {
		return runNetwork(ctx, o, rule)
	}
	return runToy(ctx, o, rule)
}

// datasetNames lists every -dataset the command knows.
func datasetNames() []string {
	return append(slices.Clone(toy.Problems), multimnist.Names()...)
}
