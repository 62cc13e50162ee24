// Command train moves an ensemble of particles towards several targets with
// MT-SGD (Phan et al., NeurIPS 2022) or one of its baselines.
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
//	       (Section 4.2), built from the raw IDX files; see package
//	       data/multimnist. Get the files with scripts/fetch-data.
//
// Methods (-method): mtsgd, svgd, moo-svgd, mgda, linear; see package
// particles. svgd and linear weight the targets equally.
//
// Flags:
//
//	-dataset NAME       data set (required)
//	-method NAME        update rule (default mtsgd)
//	-particles M        number of particles (default 50)
//	-steps N            optimiser steps (default 1000)
//	-lr RATE            learning rate (default 0.03)
//	-optimizer NAME     adam or sgd (default adam)
//	-momentum MU        SGD momentum (default 0.9; -optimizer sgd only)
//	-kernel-scale S     multiplies the median-heuristic RBF bandwidth (default 1)
//	-repulsion RHO      weight of the kernel-gradient term (default 1)
//	-seed N             fixes the initial particles (default 1)
//	-out DIR            output directory (default runs/DATASET-METHOD-seedN)
//	-progress           show a progress bar on stderr (default true)
//	-data-dir DIR       where data sets are looked for (default
//	                    $MTSGD_DATA_DIR, else ~/.cache/mtsgd)
//	-preview FILE       write a 4×4 grid of training examples with their
//	                    labels to FILE (PNG) and exit
//	-stats              print both splits' sizes and label histograms and exit
//
// It writes DIR/particles.csv (header particle,theta_0,…, one row per
// particle, final positions) and DIR/particles.png (mog3: the particles over
// the three densities' contours; zdt3: the particles in objective space over
// the true Pareto front), and logs where the particles ended.
//
// Example, the paper's first toy experiment:
//
//	train -dataset mog3 -method mtsgd -particles 50 -steps 1000 -lr 0.03 -seed 1 -out runs/mog3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/multimnist"
	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/toy"
)

// Options is everything a run depends on.
type Options struct {
	Dataset     string
	Method      string
	Particles   int
	Steps       int
	LR          float64
	Optimizer   string
	Momentum    float64
	KernelScale float64
	Repulsion   float64
	Seed        uint64
	Out         string
	Progress    bool

	DataDir string // where data sets are looked for; see data.Dir
	Preview string // write a preview PNG of the training set here and exit
	Stats   bool   // print data set sizes and label histograms and exit
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
	fs.StringVar(&o.Method, "method", "mtsgd", "update rule: "+strings.Join(particles.Methods, ", "))
	fs.IntVar(&o.Particles, "particles", 50, "number of particles")
	fs.IntVar(&o.Steps, "steps", 1000, "optimiser steps")
	fs.Float64Var(&o.LR, "lr", 0.03, "learning rate")
	fs.StringVar(&o.Optimizer, "optimizer", "adam", "optimiser: adam or sgd")
	fs.Float64Var(&o.Momentum, "momentum", 0.9, "SGD momentum (with -optimizer sgd)")
	fs.Float64Var(&o.KernelScale, "kernel-scale", 1, "multiplies the median-heuristic RBF bandwidth")
	fs.Float64Var(&o.Repulsion, "repulsion", 1, "weight of the kernel-gradient (repulsive) term")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed: fixes the initial particles")
	fs.StringVar(&o.Out, "out", "", "output directory (default runs/DATASET-METHOD-seedN)")
	fs.BoolVar(&o.Progress, "progress", true, "show a progress bar on stderr")
	fs.StringVar(&o.DataDir, "data-dir", "", "data directory (default $"+data.DirEnv+", else ~/.cache/mtsgd)")
	fs.StringVar(&o.Preview, "preview", "", "write a grid of 16 training examples with their labels to this PNG file and exit")
	fs.BoolVar(&o.Stats, "stats", false, "print the data sets' sizes and label histograms and exit")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Dataset == "" {
		return o, fmt.Errorf("-dataset is required (%s)", strings.Join(datasetNames(), ", "))
	}
	if o.Out == "" {
		o.Out = fmt.Sprintf("runs/%s-%s-seed%d", o.Dataset, o.Method, o.Seed)
	}
	return o, o.check()
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
	}
	return nil
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
	if _, ok := multimnist.Lookup(o.Dataset); ok {
		return runNetwork(ctx, o, rule)
	}
	return runToy(ctx, o, rule)
}

// datasetNames lists every -dataset the command knows.
func datasetNames() []string {
	return append(slices.Clone(toy.Problems), multimnist.Names()...)
}
