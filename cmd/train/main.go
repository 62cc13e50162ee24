// Command train moves an ensemble of particles towards several targets with
// MT-SGD (Phan et al., NeurIPS 2022) or one of its baselines: points on the
// paper's toy problems, or multi-task networks on its image data sets.
//
// Usage:
//
//	train -dataset NAME [flags]
//	train -data DIR [flags]
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
//	sarcos SARCOS inverse dynamics (Section 4.4): 21 inputs, 7 torques as
//	       7 regression tasks, from DATA/sarcos/sarcos_inv.mat and
//	       sarcos_inv_test.mat (package data/sarcos); each particle is an
//	       MLP 21→256→256→256 with one linear head per task (package
//	       models/mlp), trained on the mean squared error. Best checkpoint
//	       by validation MSE.
//	celeba CelebA face attributes (Section 4.3): binary tasks from
//	       DATA/celeba in the official layout (img_align_celeba/,
//	       list_attr_celeba.txt, list_eval_partition.txt; package
//	       data/celeba), images resized to 64×64; each particle is a
//	       ResNet-18 trunk with batch normalisation and one linear 512→2
//	       head per task (package models/resnet18). By default the main
//	       table's protocol: the first 10 attributes, the first 40,000
//	       training images. Best checkpoint by validation accuracy.
//	files  your own data, -data DIR: DIR/train.npz (optionally valid.npz
//	       and test.npz; arrays x, N×D or N×C×H×W, uint8 or float, and y,
//	       N×K, a column per task; or train.csv and so on, a column per
//	       feature and task) and DIR/tasks.json naming the tasks and
//	       their kinds (package data/files; docs/own-data.md). The
//	       inputs are standardised with the training split's statistics
//	       (tasks.json may say unit, x/255, or none), which the checkpoint
//	       records with DIR. The model is -model, else picked from the
//	       input shape: lenet for 1×36×36 images, resnet18 for 3×64×64,
//	       else mlp (images flattened). Without valid.npz, -valid
//	       examples (default a tenth) are held out at random (-seed);
//	       without test.npz the validation split is also the test split.
//	       Adam, lr 1e-3, batch 128, 30 epochs. Predict on new inputs
//	       with cmd/predict.
//
// Methods (-method) are those registered with package experiment (`go
// doc ./experiment Method`; train -h gives each one's help line). On
// networks: mtsgd (trunks by MT-SGD, each task's heads by SVGD), linear, linear-pref,
// mgda, pareto-mtl, moo-svgd, single and svgd; `go doc ./experiment
// Settings.Rules` says what each moves and how. On toy problems those
// whose rule needs only positions and scores: mtsgd, linear, mgda,
// moo-svgd and svgd (svgd and linear weight the targets equally). The
// data sets, their defaults and their models come from package
// experiment's registries too, the toy problems from package
// particles/toy's.
//
// Flags for every data set:
//
//	-dataset NAME       data set (required, unless -data is given)
//	-method NAME        update rule (default mtsgd)
//	-particles M        number of particles (default 50 toy, 5 networks)
//	-lr RATE            learning rate (default 0.03 toy, 0.001 Multi-MNIST,
//	                    0.0001 SARCOS, 0.0005 CelebA)
//	-optimizer NAME     adam or sgd (default sgd on Multi-MNIST, else adam)
//	-momentum MU        SGD momentum (default 0.9); refused with adam
//	-kernel-scale S     multiplies the median-heuristic RBF bandwidth (default 1)
//	-repulsion RHO      weight of the kernel-gradient term; on networks, of
//	                    the trunks' rule (default 1 toy problems; networks:
//	                    the score scale's, see -score-scale)
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
// Networks (defaults: the paper's setup for each data set; Multi-MNIST:
// SGD, lr 0.001, batch 256, 100 epochs, multistep; SARCOS: Adam, lr 1e-4,
// batch 512, 1000 epochs, constant rate; CelebA: Adam, lr 5e-4, batch 64,
// 100 epochs, the rate × 0.85 every 10 epochs):
//
//	-data DIR           train on the files in DIR (-dataset files, above)
//	-sep S, -missing drop, -standardize-targets=false
//	                    how -data's files are read (docs/own-data.md)
//	-model NAME         lenet, mlp or resnet18 (default: the data set's;
//	                    files: from the input shape); a model that cannot
//	                    take the data's shape or tasks is status 2
//	-hidden LIST        -model mlp: hidden layer widths (default
//	                    256,256,256)
//	-epochs N           passes over the training set (default 100 / 1000 / 100)
//	-batch N            examples per step (default 256 / 512 / 64)
//	-lr-schedule NAME   multistep, exponential or constant (default
//	                    multistep / constant / exponential)
//	-lr-milestones L    multistep: epochs at which the rate is multiplied by
//	                    -lr-gamma (default 15,30,45,60,75,90); refused
//	                    with another schedule
//	-lr-gamma G         factor of each decay (default 0.5; CelebA 0.85)
//	-lr-every N         exponential: epochs between decays (default 1;
//	                    CelebA 10)
//	-tasks SPEC         CelebA: the first N attributes ("10", "40") or
//	                    attribute names separated by commas, each once
//	                    (default 10)
//	-preset NAME        MT-SGD's choices where the paper and the authors'
//	                    code differ (default authors-params):
//	                      paper    Algorithm 1 as printed: kernels over the
//	                               parameters, four-term U, no warm-up,
//	                               batch-mean scores with repulsion 1/N (the
//	                               paper's posterior, its factor N in the
//	                               learning rate)
//	                      authors  the authors' code: kernels over the trunk's
//	                               features and the heads' outputs, heads
//	                               moved first, trunk scores normalised per
//	                               coordinate across particles, U's first
//	                               term only, one warm-up epoch, repulsion
//	                               0.0015 (trunk) and 0.25 (heads)
//	                      authors-params
//	                               authors with the kernels over the
//	                               parameters and one gradient evaluation
//	                               per step (a third of the step time);
//	                               the default, chosen on validation
//	                    A flag below given with a preset overrides that
//	                    choice alone; other methods than mtsgd take no
//	                    preset (batch-mean scores, no warm-up, kernels over
//	                    the parameters). See docs/mtsgd-choices.md.
//	-kernel-on SPACE    params (the kernels compare the parameter vectors) or
//	                    outputs (the trunk's features and each head's outputs
//	                    on the batch; the repulsion goes back to the
//	                    parameters by one more backward pass; needs -u-terms
//	                    first with mtsgd)
//	-order O            joint (one gradient evaluation moves trunks and heads)
//	                    or heads-first (the heads move first and the trunks'
//	                    task gradients are taken through the moved heads: a
//	                    second gradient evaluation per step)
//	-score-scale S      mean (the gradient of the batch-mean loss), sum (times
//	                    N, the training set's size) or normalized (each task's
//	                    trunk scores divided per coordinate by their norm over
//	                    the particles); it also sets the repulsion defaults:
//	                    mean 1/N and 1/N, sum 1 and 1, normalized 0.0015 and
//	                    0.25 (trunk and heads)
//	-u-terms T          full (Equation Uij-1's four terms) or first (the
//	                    kernel-weighted score products only)
//	-warmup N           first N epochs without kernel: plain gradient steps,
//	                    each head its own task's, the trunk of particle i the
//	                    mix (i/(M−1)·task 1 + (1 − i/(M−1))·task 2)/M
//	                    (default: the preset's)
//	-head-repulsion RHO weight of the heads' kernel-gradient term (default:
//	                    the score scale's)
//	-valid N            Multi-* data sets: training composites held out for
//	                    validation, from source images no training composite
//	                    uses (default 10000; 0: none); best/ is chosen on them.
//	                    files without valid.npz: training examples held out
//	                    (default -1: a tenth)
//	-log-qp             mtsgd: log every step's min-norm QP (K, w*, duality
//	                    gap, certified)
//	-train-limit N      train on the first N training examples (default all;
//	                    CelebA 40000, the paper's subset; 0: all)
//	-test-limit N       evaluate on the first N test (and validation)
//	                    examples (default all)
//	-data-dir DIR       where data sets are looked for (default
//	                    $MTSGD_DATA_DIR, else ~/.cache/mtsgd)
//	-workers N          graphs run at once (default GOMAXPROCS)
//	-device D           where each step's losses and gradients are computed:
//	                    cpu (default) or cuda, the first GPU, in a binary
//	                    built with -tags gpu (README, GPU); the update rules,
//	                    evaluation and checkpoints run on the CPU, so a run
//	                    resumes on either device. cuda in a build without
//	                    the tag is status 2, on a host without a usable GPU
//	                    status 1, both with the reason
//	-dtype T            float32 or float64 graphs (default float32)
//	-preview FILE       write a 4×4 grid of training examples with their
//	                    labels to FILE (PNG) and exit
//	-stats              print both splits' sizes and label histograms and exit
//	                    (not with -preview)
//	-checkpoint-every N also save DIR/last every N steps (default 0: at the
//	                    end of each epoch only)
//	-best-metric NAME   the metric, averaged over tasks, that selects DIR/best:
//	                    accuracy (higher is better), nll, brier, ece or mse
//	                    (lower is better), on the validation split where
//	                    there is one (default accuracy; SARCOS: mse)
//	-resume DIR         continue the run in DIR (or DIR/last) from DIR/last;
//	                    only -epochs (at least 1, to extend the run),
//	                    -workers, -device, -data-dir, -progress,
//	                    -checkpoint-every, -best-metric and -data may be
//	                    given with it. A run on your own files resumes on
//	                    the files it trained on: the checkpoint records
//	                    each file's SHA-256 (and tasks.json's), and a file
//	                    changed, missing or new since is refused by name
//	                    (status 1); -data DIR names the directory the
//	                    files have moved to, the hashes deciding whether
//	                    they are the same
//	-overwrite          train into a -out that holds a run (last/, best/ or
//	                    metrics.jsonl), deleting them when training starts;
//	                    without it such a -out is refused before any data
//	                    loads, and train says to give -resume DIR or another
//	                    -out
//
// Toy problems write DIR/particles.csv (header particle,theta_0,…, one row
// per particle, final positions) and DIR/particles.png (mog3: the particles
// over the three densities' contours; zdt3: the particles in objective space
// over the true Pareto front), and log where the particles ended.
//
// Networks are scored on the validation set (where there is one) and the
// test set after every epoch: one log line per split and task with the
// ensemble's accuracy, Brier score, ECE and NLL (the ensemble predicts the
// mean of the particles' probabilities), and one JSON object per split,
// task and epoch in DIR/metrics.jsonl, with every particle's scores too.
// The last epoch also logs each particle's scores. After every epoch the
// whole state goes to the checkpoint DIR/last, and to DIR/best when the
// epoch beats the one DIR/best holds (package checkpoints; evaluate one
// with eval -ckpt). A failed save ends training with an error. A NaN or
// Inf in a loss, gradient or update direction stops training with an
// error naming the step, particle and task.
//
// Before it allocates a run, train estimates the least memory the run
// needs (the particles' vectors, the kernel matrices, the workers' graphs
// at -batch, the evaluation's predictions) and refuses one that exceeds
// this machine's memory (MemTotal in /proc/meminfo, or the cgroup's
// limit; $MTSGD_MEMORY, e.g. 24G, replaces the figure), naming the flag to
// lower and the estimate, with status 2. Networks are checked once their
// data has loaded.
//
// A run directory belongs to one process: train and train -resume lock
// DIR (the file DIR/.lock, which holds the owner's PID) until they end,
// and a second process on the same DIR fails at once, naming the PID. The
// kernel releases the lock of a process that dies, however it dies.
//
// SIGINT or SIGTERM during training saves DIR/last at the current step,
// loads it back, and exits with status 3; train -resume DIR continues
// exactly where it stopped, to the same parameters as a run never
// stopped. If that save fails (a full disk, say), train exits with status
// 4 and says what failed and which checkpoint, if any, is the last good
// one.
//
// Exit statuses:
//
//	0  done
//	1  error (a refused or locked -out, missing data, data changed
//	   since the checkpoint, divergence, a failed save, ...)
//	2  bad command line, including a run too big for this machine's
//	   memory: the message names the flag to lower and the estimate
//	   (networks: once the data has loaded; a checkpoint whose settings
//	   are too big is status 1), a -valid larger than the data, a
//	   $MTSGD_MEMORY that is not a size, a -model that cannot take the
//	   data, and bad data: a file of -data DIR that is malformed or
//	   inconsistent (the message names the file, the array and the
//	   index)
//	3  interrupted; DIR/last is saved and verified: train -resume DIR
//	   (or interrupted while the data loaded, nothing written: rerun)
//	4  interrupted, and saving DIR/last failed; the message names the
//	   last good checkpoint
//
// docs/what-can-go-wrong.md says more.
//
// Examples:
//
//	train -dataset mog3 -method mtsgd -particles 50 -steps 1000 -lr 0.03 -seed 1 -out runs/mog3
//	train -dataset multi-mnist -particles 5 -epochs 3 -seed 1 -out runs/mm3
//	train -dataset multi-mnist -preset paper -out runs/mm-paper
//	train -dataset celeba -tasks 10 -particles 5 -out runs/celeba
//	train -data mydata -model mlp -hidden 128,128 -out runs/mine
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
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

// Exit statuses.
const (
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 3 // stopped by a signal; the state is saved for -resume
	exitUnsaved     = 4 // stopped by a signal, and saving the state failed
)

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(exitUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := report(run(ctx, opts), opts.Out)
	stop()
	os.Exit(status)
}

// usageError is a bad command line found only after the data loaded: a
// network run too big for the machine's memory (sysmem.ErrTooBig).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// report logs how a run that wrote to out ended and returns the exit
// status.
func report(err error, out string) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, experiment.ErrInterrupted):
		log.WithField("checkpoint", filepath.Join(out, "last")).Warn("interrupted; continue with: train -resume " + out)
		return exitInterrupted
	case errors.Is(err, errLoadInterrupted):
		log.Warn(err.Error() + "; run the same command again")
		return exitInterrupted
	case errors.Is(err, experiment.ErrUnsaved):
		log.Error(err)
		return exitUnsaved
	case errors.As(err, new(usageError)), errors.Is(err, data.ErrInvalid), errors.Is(err, experiment.ErrUnfit):
		// A bad command line found once the data loaded, or bad data.
		log.Error(err)
		return exitUsage
	}
	log.Error(err)
	return exitError
}

// parseFlags reads the command line into Options and checks it.
func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: train -dataset NAME [flags]   (see `go doc ./cmd/train`)")
		fmt.Fprintln(stderr, "       train -resume DIR [-epochs N] [-workers N] [-data-dir DIR] [-data DIR]")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Dataset, "dataset", "", "data set: "+strings.Join(datasetNames(), ", ")+" (required)")
	fs.StringVar(&o.Method, "method", experiment.DefaultMethod, methodUsage())
	fs.IntVar(&o.Particles, "particles", 0, "number of particles (default 50 for toy problems, 5 for networks)")
	fs.Float64Var(&o.LR, "lr", 0, "learning rate (default 0.03 toy problems; "+byDataset(func(s experiment.Settings) any { return s.LR })+")")
	fs.StringVar(&o.Optimizer, "optimizer", "", "optimiser: adam or sgd (default adam toy problems; "+byDataset(func(s experiment.Settings) any { return s.Optimizer })+")")
	fs.Float64Var(&o.Momentum, "momentum", 0.9, "SGD momentum (with -optimizer sgd)")
	fs.Float64Var(&o.KernelScale, "kernel-scale", 1, "multiplies the median-heuristic RBF bandwidth")
	fs.Float64Var(&o.Repulsion, "repulsion", 1, "weight of the kernel-gradient (repulsive) term; for networks, of the trunks' (default 1 toy problems; networks: the score scale's, see -score-scale)")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed: fixes data generation, initialisation and shuffling")
	fs.StringVar(&o.Out, "out", "", "output directory (default runs/DATASET-METHOD-seedN)")
	fs.BoolVar(&o.Progress, "progress", true, "show a progress bar on stderr")

	fs.IntVar(&o.Steps, "steps", 1000, "toy problems: optimiser steps")

	fs.StringVar(&o.Data, "data", "", "networks: train on your own data: the directory of train.npz (optionally valid.npz, test.npz) and tasks.json (go doc ./data/files); implies -dataset "+files.Name+"; with -resume, the directory a run's files have moved to")
	ff := addFilesFlags(fs)
	fs.StringVar(&o.Model, "model", "", "networks: the model, "+strings.Join(experiment.ModelNames(), ", ")+" (default: the data set's; "+files.Name+": picked from the input shape)")
	fs.StringVar(&o.Hidden, "hidden", "", "networks, -model mlp: hidden layer widths separated by commas (default "+joinInts(experiment.MLPHidden)+")")
	fs.StringVar(&o.DataDir, "data-dir", "", "networks: data directory (default $"+data.DirEnv+", else ~/.cache/mtsgd)")
	fs.StringVar(&o.Preview, "preview", "", "networks: write a grid of 16 training examples with their labels to this PNG file and exit")
	fs.BoolVar(&o.Stats, "stats", false, "networks: print the data sets' sizes and label histograms and exit")
	fs.IntVar(&o.Epochs, "epochs", 0, "networks: passes over the training set (default "+byDataset(func(s experiment.Settings) any { return s.Epochs })+")")
	fs.IntVar(&o.Batch, "batch", 0, "networks: examples per step (default "+byDataset(func(s experiment.Settings) any { return s.Batch })+")")
	fs.StringVar(&o.Tasks, "tasks", "", strings.Join(experiment.DatasetsWith(choosesTasks), ", ")+": the first N tasks, or task names separated by commas (default "+byDataset(func(s experiment.Settings) any {
		return s.Tasks
	}, choosesTasks)+")")
	fs.IntVar(&o.TrainLimit, "train-limit", 0, "networks: train on the first N training examples only (0: all; default "+byDataset(func(s experiment.Settings) any { return s.TrainLimit })+")")
	fs.IntVar(&o.TestLimit, "test-limit", 0, "networks: evaluate on the first N test examples only (0: all)")
	fs.IntVar(&o.Warmup, "warmup", 0, "networks: epochs of plain gradient steps (no kernel) before the update rule (default: the preset's)")
	fs.Float64Var(&o.HeadRepulsion, "head-repulsion", 0, "networks: weight of the kernel-gradient term of the heads' svgd (default: the score scale's, see -score-scale)")
	fs.StringVar(&o.Preset, "preset", "", "networks: MT-SGD choices: "+presetNames()+" (default "+experiment.DefaultPreset+")")
	fs.StringVar(&o.ScoreScale, "score-scale", "", "networks: scores as the gradient of the batch-mean loss (mean), times N (sum), or normalised per coordinate across particles (normalized) (default: the preset's)")
	fs.StringVar(&o.UTerms, "u-terms", "", "networks: MT-SGD's U with all four terms (full) or the first only (first) (default: the preset's)")
	fs.StringVar(&o.KernelOn, "kernel-on", "", "networks: the kernels compare the parameters (params) or the trunk's features and the heads' outputs on the batch (outputs) (default: the preset's)")
	fs.StringVar(&o.Order, "order", "", "networks: one gradient evaluation moves trunks and heads (joint), or the heads move first and the trunks' gradients go through them (heads-first) (default: the preset's)")
	fs.IntVar(&o.Valid, "valid", 0, strings.Join(experiment.DatasetsWith(holdsOut), ", ")+": training examples held out for validation (0: none; default "+byDataset(func(s experiment.Settings) any {
		return s.Valid
	}, holdsOut)+")")
	fs.StringVar(&o.Schedule, "lr-schedule", "", "networks: learning-rate schedule: multistep, exponential or constant (default "+byDataset(func(s experiment.Settings) any { return s.Schedule })+")")
	fs.StringVar(&o.Milestones, "lr-milestones", "15,30,45,60,75,90", "networks: multistep: epochs at which the rate is multiplied by -lr-gamma")
	fs.Float64Var(&o.Gamma, "lr-gamma", 0, "networks: factor of each learning-rate decay (default "+byDataset(func(s experiment.Settings) any { return s.Gamma })+")")
	fs.IntVar(&o.Every, "lr-every", 0, "networks: exponential: epochs between decays (default "+byDataset(func(s experiment.Settings) any { return s.Every })+")")
	fs.IntVar(&o.Workers, "workers", runtime.GOMAXPROCS(0), "networks: graphs run at once")
	fs.StringVar(&o.Device, "device", "cpu", "networks: where the training graphs run, cpu or cuda (a build with -tags gpu)")
	fs.StringVar(&o.Dtype, "dtype", "float32", "networks: float32 or float64 graphs")
	fs.StringVar(&o.Resume, "resume", "", "networks: continue the run whose output directory is DIR, from DIR/last")
	fs.IntVar(&o.CheckpointEvery, "checkpoint-every", 0, "networks: also save DIR/last every N steps (0: at each epoch's end only)")
	fs.BoolVar(&o.LogQP, "log-qp", false, "networks, mtsgd: log every step's min-norm QP: K, the weights w*, the duality gap and whether it is certified")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "networks: train into a -out that holds a run (last/, best/, metrics.jsonl), replacing it")
	fs.StringVar(&o.BestMetric, "best-metric", "", "networks: metric that selects DIR/best: "+strings.Join(experiment.BestMetrics, ", ")+", on the validation split where there is one (default "+byDataset(func(s experiment.Settings) any {
		return experiment.DefaultBest(s.Dataset)
	})+")")
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
	if err := ff.check(set); err != nil {
		return o, err
	}
	if o.Resume != "" {
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
		if !set["epochs"] {
			o.Epochs = 0 // keep the checkpoint's
		} else if o.Epochs < 1 {
			// 0 would otherwise read as "keep the checkpoint's".
			return o, fmt.Errorf("-epochs must be at least 1, got %d", o.Epochs)
		}
		return o, nil
	}
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
		o.Files = ff.spec(abs)
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
	// Flags not given take the data set's defaults (experiment.Defaults;
	// for toy problems 50 particles and Adam at 0.03).
	d := experiment.Defaults(o.Dataset).ForMethod(o.Method)
	if !network {
		d.Particles, d.LR, d.Optimizer = 50, 0.03, "adam"
		d.Repulsion = 1
	}
	if set["preset"] {
		p, err := experiment.LookupPreset(o.Preset)
		if err != nil {
			return o, fmt.Errorf("-preset: %w", err)
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
	if o.Out == "" {
		o.Out = fmt.Sprintf("runs/%s-%s-seed%d", o.Dataset, o.Method, o.Seed)
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

// conflicts refuses flags given together where one would be ignored, so
// that a run does not silently differ from what its command line says.
// set holds the flags given explicitly.
func conflicts(o Options, set map[string]bool) error {
	switch {
	case o.Stats && o.Preview != "":
		return errors.New("-stats and -preview cannot be given together: each prints its own report and exits")
	case set["momentum"] && o.Optimizer != "sgd":
		return fmt.Errorf("-momentum applies to -optimizer sgd only; the optimizer is %s", o.Optimizer)
	case set["lr-milestones"] && o.Schedule != "multistep":
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
