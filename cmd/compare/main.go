// Command compare trains several methods on one data set under one budget
// and seed list, and tabulates their ensembles' test scores side by side.
//
// Usage:
//
//	compare -dataset NAME [flags]
//
// Every method is trained for every seed with the data set's defaults
// (those of train: go doc ./cmd/train) changed only by the flags below, so
// all methods see the same data, batches, optimiser and budget. A method
// is a train -method name, or mtsgd:PRESET for MT-SGD with one of train's
// presets (paper, authors, authors-params), either followed by settings
// of that method's own, @lr=RATE and @scale=mean|sum|normalized (its
// score scale), as in moo-svgd@scale=normalized. Run METHOD-seedS goes to
// OUT/METHOD-seedS (":" written as "-", "@lr=" as "-lr", "@scale=" as "-"), a train output directory with metrics.jsonl, its
// chart curves.png and the checkpoints last/ and best/. A run already finished there is not
// redone, and an interrupted one is resumed: rerun the same command after
// a stop. A run directory made with other settings is an error rather
// than silently mixed in. The default methods are those registered as
// compared (go doc ./experiment Method), MT-SGD once per preset with the
// default preset first (DefaultMethods).
//
// The table has one row per method and task: the ensemble's accuracy, ECE
// (in percent), Brier score and NLL (MSE for regression) on the test set
// after the last epoch, as mean ± standard deviation over the seeds
// (sample deviation; none for a single seed), and the wall seconds per
// epoch (steps and evaluation, summed over resumes). On the Multi-* data
// sets the paper's ECE (its Table 2) and, where it can be read, its
// accuracy stand beside ours. The table is printed and written to
// OUT/compare.md, as CSV to OUT/compare.csv, and for classification as a
// bar chart of accuracy and ECE per method and task, ours beside the
// paper's, to OUT/compare.png.
//
// Protocols (-protocol) fix the budget in one word; -epochs and -seeds
// given beside one override it:
//
//	reduced  5 epochs, seed 1: every method of the default list on
//	         Multi-MNIST in about 15 minutes each on 2 cores (the
//	         paper's optimiser and rate schedule, its first 5 epochs)
//	paper    100 epochs, seeds 1,2,3: the paper's protocol (3 runs)
//	paper-study
//	         100 epochs, the paper's protocol run to its end on a list
//	         of 15 runs, each a method spec and a seed (every seed-1
//	         run first; docs/results/paper-multi-mnist), and each
//	         finished run assessed (below)
//	tuned    every method at its own learning rate, chosen on the
//	         validation split: a search, then 3 epochs, seeds 1,2,3
//	         (below)
//
// # The tuned protocol: each method at its best learning rate
//
// A comparison at one learning rate measures the rate as much as the
// methods. -protocol tuned first searches: every method trains once per
// candidate rate (-lrs, default 0.001,0.003,0.01,0.03; a kernel method
// without MT-SGD's presets, moo-svgd or svgd, also once per score scale,
// mean and normalized, since the scale sets its step as much as the
// rate), and then at each rate of -extend-lrs (default 0.1, 0.3) in turn
// while its best so far is the largest rate it tried (a choice at the
// grid's edge may not be the best; an extension not needed is recorded
// as such), -search-epochs epochs (default 2) on the first
// -search-train-limit training examples (default 55000, half of
// Multi-*'s), with the first seed. Each method's choice is the candidate
// with the lowest validation NLL averaged over the tasks (MSE for
// regression) after the search's last epoch, the lower rate when two are
// within 1e-4; a candidate that diverges is recorded and never chosen.
// Then every method trains at its choice for -epochs (default 3) and
// every seed (default 1,2,3). The test split is never read for a choice.
// The search runs go to OUT/search/METHOD-lrRATE[-SCALE], the final ones
// to OUT/METHOD-seedS; the tables name each method's choice, and OUT
// also gets search.md (every candidate's validation figures),
// summary.md (a line per method, a column per task; then, per task and
// metric, MT-SGD against the best other method, and whether the gap is
// larger than the sum of their seed standard deviations) and
// compare-time.png (test NLL against seconds of training, mean ± sd over
// the seeds). Default methods: mtsgd:authors-params, linear, mgda,
// pareto-mtl, moo-svgd, single; -lr is refused (-lrs gives the
// candidates). docs/results-tuned.md has the protocol's budget and what
// it found on the Multi-* data sets.
//
// Flags:
//
//	-dataset NAME      network data set (required)
//	-protocol NAME     reduced, paper or tuned (default: the data set's epochs, seed 1)
//	-methods LIST      comma-separated (default mtsgd:authors-params,mtsgd:authors,mtsgd:paper,linear,mgda,pareto-mtl,moo-svgd,single)
//	-seeds LIST        comma-separated seeds (default 1)
//	-epochs N          epochs per run (default: the data set's)
//	-lr RATE           learning rate (default: the data set's)
//	-optimizer NAME    sgd or adam for every method (default: the data set's)
//	-lrs LIST          -protocol tuned: candidate rates (default 0.001,0.003,0.01,0.03)
//	-extend-lrs LIST   -protocol tuned: rates above -lrs, each tried while a
//	                   method's best so far is the largest it tried
//	                   (default 0.1,0.3; "" none)
//	-search-epochs N   -protocol tuned: epochs of a search run (default 2)
//	-search-train-limit N
//	                   -protocol tuned: search runs train on the first N
//	                   examples (default 55000; 0: as the final runs)
//	-particles M       particles (default 5)
//	-train-limit N     train on the first N examples (default all)
//	-test-limit N      evaluate on the first N examples (default all)
//	-out DIR           where runs and tables go (default runs/compare-DATASET)
//	-data-dir DIR      data directory (default $MTSGD_DATA_DIR, else ~/.cache/mtsgd)
//	-workers N         graphs run at once (default GOMAXPROCS)
//	-device D          cpu (default) or cuda: train on the first GPU (a
//	                   binary built with -tags gpu; see train's -device);
//	                   with -slurm each task asks for one (--gres=gpu:1)
//
// OUT belongs to one process: compare locks it (the file OUT/.lock, which
// holds the owner's PID) until it ends, and each run directory while it
// trains or reads that run, so that a second compare on OUT, or a train
// -resume of one of its runs, fails at once naming the PID.
//
// # The paper study: assessed runs
//
// -protocol paper-study trains the methods at the paper's rate and at
// their tuned rates, with seeds 2 and 3 for MT-SGD, linear
// scalarisation and MOO-SVGD (study.go lists them). When a run finishes,
// its checkpoints last/ and best/ are assessed into its result.json: the
// ensemble's test scores raw and after temperature scaling (eval's, the
// temperatures fitted on the validation split), and the AUROC with which
// its predictive entropy and mutual information tell the other Multi-*
// data set's test inputs (Multi-Fashion for Multi-MNIST) from its own.
// -aggregate then also writes OUT/study.md (every run at its last epoch,
// at best/, and at the epoch of its best test accuracy, the authors'
// rule, labelled as chosen on the test split; MT-SGD against the best
// other method of its rate, per task and metric) and
// OUT/study-calibration.png (test ECE and NLL per epoch, mean ± sd over
// the seeds). A finished run whose checkpoints are gone cannot be
// assessed: keep last/ and best/ until its result.json holds its
// assessment.
//
// # Sweeps: one run per process, on a cluster
//
// A comparison is a plan, OUT/plan.json: its flags and its cells, one per
// run, numbered from 0 in the order compare runs them (the tuned
// protocol's search cells first; then seeds in -seeds order, methods in
// -methods order within a seed), each with its data set, method, seed,
// run directory and settings. A finished run leaves OUT/DIR/result.json,
// its settings and scores; -aggregate reads these, so the plan and the
// result files alone (a few kilobytes a run, without the checkpoints)
// rebuild the tables. Every compare writes the
// plan first; the cells can then run anywhere that sees OUT, each in its
// own process, and the tables be made once they are done:
//
//	-plan              write OUT/plan.json and stop
//	-cell I            run cell I of OUT/plan.json (needs -out; takes only
//	                   -data-dir, -workers and -device besides): trains it unless
//	                   finished, resumes it if interrupted; locks its run
//	                   directory, not OUT, so cells run at once; a final
//	                   cell of the tuned protocol refuses to run before
//	                   its method's search cells have finished
//	-aggregate         write compare.md, .csv and .png from the finished
//	                   cells of OUT/plan.json (needs -out), and
//	                   compare-curves.png: per task, each method's test
//	                   accuracy and ECE per epoch, mean ± standard deviation
//	                   over its seeds; with cells missing, compare.md lists
//	                   them (with the sbatch --array to rerun them) and
//	                   compare exits with status 5
//	-slurm             write the plan, OUT/sweep.sbatch (a Slurm job array,
//	                   --array=0-(N-1), task I running this compare binary
//	                   with -cell I, its logs in OUT/slurm/) and
//	                   OUT/sweep-job.yaml (a Kubernetes Indexed Job, pod I
//	                   running compare -cell $(JOB_COMPLETION_INDEX) on a
//	                   volume mounted at /sweep; written, not applied)
//	-submit            with -slurm: sbatch OUT/sweep.sbatch; print the job id
//	-slurm-cpus N      CPUs per cell, and each cell's -workers (default 2)
//	-slurm-mem SIZE    memory per cell, as sbatch --mem (default 8G)
//	-slurm-time T      time limit per cell, as sbatch --time (default 24:00:00)
//	-slurm-partition P partition (default: the cluster's)
//	-k8s-image IMAGE   the Job's image, compare on its PATH (default mtsgd:latest)
//
// The cycle, on a cluster whose nodes share OUT:
//
//	go build -o compare ./cmd/compare
//	./compare -dataset multi-mnist -protocol paper -out /shared/sweep -slurm -submit
//	squeue -j JOBID
//	./compare -aggregate -out /shared/sweep
//
// A finished cell is not redone, so a failed or cut-off sweep is completed
// by running its missing cells again (sbatch --array=LIST
// OUT/sweep.sbatch, as -aggregate prints), the whole array again, or a
// plain compare with the same flags in one process. Each array task
// receives SIGTERM two minutes before its time limit, and saves its
// run's last/ for the rerun to resume. docs/sweeps.md says more.
//
// Exit statuses:
//
//	0  done
//	1  error (a locked OUT, a run with other settings, a failed save, ...)
//	2  bad command line, or runs too big for this machine's memory (the
//	   message names the flag to lower and the estimate; the data set
//	   loads before the check)
//	3  interrupted by SIGINT or SIGTERM, the running run's last/ saved and
//	   verified: rerun the same command to continue
//	4  interrupted, and saving the running run's last/ failed; the message
//	   names the last good checkpoint
//	5  -aggregate: some cells have not finished; the tables hold those
//	   that have, and list the others
//
// docs/what-can-go-wrong.md says more.
//
// Examples, the paper's Multi-MNIST comparison on the reduced budget and
// in full:
//
//	compare -dataset multi-mnist -protocol reduced -out runs/compare-reduced
//	compare -dataset multi-mnist -protocol paper -out runs/compare-paper
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/curves"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	_ "github.com/mtsgd/mtsgd/internal/openblas" // OpenBLAS when built with -tags openblas
	"github.com/mtsgd/mtsgd/internal/runlock"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// Options is everything a comparison depends on.
type Options struct {
	Dataset    string
	Methods    []string
	Seeds      []uint64
	Epochs     int     // 0: the data set's default
	LR         float64 // 0: the data set's default
	Optimizer  string  // "": the data set's default
	Particles  int
	TrainLimit int
	TestLimit  int
	Out        string
	DataDir    string
	Workers    int
	Device     string // cpu or cuda
	// Search is the tuned protocol's learning-rate search; nil: every
	// method at LR.
	Search *Search
	// Runs lists a study's runs (study.go), in order; nil: every method
	// for every seed. Assess scores each finished run's checkpoints into
	// its result file.
	Runs   []plannedRun
	Assess bool

	// What to do instead of running the whole comparison (a sweep, see
	// plan.go): write OUT/plan.json only; run one cell of it (-1: none);
	// tabulate its finished cells; write the Slurm and Kubernetes files.
	Plan      bool
	Cell      int
	Aggregate bool
	Slurm     SlurmOptions

	device gpu.Device // opened from Device for the runs; nil: the CPU
}

// DefaultMethods are the methods compare trains unless -methods names
// others: every method registered as Compared (experiment.Method), in the
// registry's order, and a method that takes MT-SGD's presets once per
// preset, the default preset first and the others by name. With the
// built-ins these are the paper's method in each preset and its
// baselines: mtsgd:authors-params, mtsgd:authors, mtsgd:paper, linear,
// mgda, pareto-mtl, moo-svgd, single.
func DefaultMethods() []string {
	presets := []string{experiment.DefaultPreset}
	var others []string
	for _, p := range experiment.Presets {
		if p.Name != experiment.DefaultPreset {
			others = append(others, p.Name)
		}
	}
	slices.Sort(others)
	presets = append(presets, others...)
	var specs []string
	for _, m := range experiment.Methods() {
		switch {
		case !m.Compared:
		case m.Presets:
			for _, p := range presets {
				specs = append(specs, m.Name+":"+p)
			}
		default:
			specs = append(specs, m.Name)
		}
	}
	return specs
}

// A protocol is a budget: epochs and seeds, or for a study the runs
// one by one.
type protocol struct {
	Epochs int
	Seeds  string // as -seeds takes them
	Runs   []plannedRun
}

// protocols are the budgets -protocol names.
var protocols = map[string]protocol{
	"reduced":     {Epochs: 5, Seeds: "1"},
	"paper":       {Epochs: 100, Seeds: "1,2,3"},
	"tuned":       {Epochs: tunedProtocol.Epochs, Seeds: tunedProtocol.Seeds},
	"paper-study": {Epochs: 100, Runs: paperStudy},
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := report(dispatch(ctx, o, os.Stdout))
	stop()
	os.Exit(status)
}

// report logs how a comparison ended and returns the exit status.
func report(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, experiment.ErrInterrupted):
		log.Warn("interrupted; rerun the same command to continue")
		return 3
	case errors.Is(err, experiment.ErrUnsaved):
		log.Error(err)
		return 4
	case errors.Is(err, errMissing):
		log.Warn(err)
		return 5
	case errors.As(err, new(usageError)):
		log.Error(err)
		return 2
	case errors.Is(err, sysmem.ErrTooBig):
		// Every run's settings come from the flags: they ask for more
		// memory than the machine has.
		log.Error(err)
		return 2
	}
	log.Error(err)
	return 1
}

// usageError is a bad command line found only once the sweep's files are
// read: a -cell the plan does not have.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	var methods, seeds, proto, lrs, extend string
	var search Search
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: compare -dataset NAME [flags]   (see `go doc ./cmd/compare`)")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Dataset, "dataset", "", "network data set: "+strings.Join(experiment.Datasets(), ", ")+" (required)")
	fs.StringVar(&methods, "methods", strings.Join(DefaultMethods(), ","), "comma-separated methods, NAME or NAME:PRESET: "+strings.Join(experiment.MethodNames(nil), ", "))
	fs.StringVar(&seeds, "seeds", "1", "comma-separated seeds")
	fs.StringVar(&proto, "protocol", "", "budget: reduced (5 epochs, seed 1), paper (100 epochs, seeds 1,2,3), paper-study (the paper's protocol, its runs listed one by one, assessed) or tuned (a learning-rate search on validation, then 3 epochs, seeds 1,2,3); -epochs and -seeds override it")
	fs.IntVar(&o.Epochs, "epochs", 0, "epochs per run (default: the data set's; with -protocol tuned, per final run)")
	fs.Float64Var(&o.LR, "lr", 0, "learning rate (default: the data set's)")
	fs.StringVar(&o.Optimizer, "optimizer", "", "sgd or adam for every method (default: the data set's)")
	fs.StringVar(&lrs, "lrs", "", "with -protocol tuned: the candidate learning rates, comma-separated (default "+floats(tunedProtocol.Search.LRs)+")")
	fs.StringVar(&extend, "extend-lrs", floats(tunedProtocol.Search.Extend), "with -protocol tuned: rates above -lrs, each tried while a method's best so far is the largest it tried (\"\": none)")
	fs.IntVar(&search.Epochs, "search-epochs", tunedProtocol.Search.Epochs, "with -protocol tuned: epochs per search run")
	fs.IntVar(&search.TrainLimit, "search-train-limit", tunedProtocol.Search.TrainLimit, "with -protocol tuned: search runs train on the first N examples (0: as the final runs)")
	fs.IntVar(&o.Particles, "particles", 5, "particles per run")
	fs.IntVar(&o.TrainLimit, "train-limit", 0, "train on the first N examples (0: all)")
	fs.IntVar(&o.TestLimit, "test-limit", 0, "evaluate on the first N examples (0: all)")
	fs.StringVar(&o.Out, "out", "", "output directory (default runs/compare-DATASET)")
	fs.StringVar(&o.DataDir, "data-dir", "", "data directory (default $"+data.DirEnv+", else ~/.cache/mtsgd)")
	fs.IntVar(&o.Workers, "workers", runtime.GOMAXPROCS(0), "graphs run at once")
	fs.StringVar(&o.Device, "device", "cpu", "where the runs train: cpu or cuda (a build with -tags gpu)")
	fs.BoolVar(&o.Plan, "plan", false, "write OUT/"+PlanFile+", the comparison's cells, and stop")
	fs.IntVar(&o.Cell, "cell", -1, "run cell `I` of OUT/"+PlanFile+" only (the comparison flags come from the plan)")
	fs.BoolVar(&o.Aggregate, "aggregate", false, "tabulate the finished cells of OUT/"+PlanFile+"; status 5 when some are missing")
	fs.BoolVar(&o.Slurm.Write, "slurm", false, "write the plan, OUT/"+SbatchFile+" (a Slurm job array over it) and OUT/"+JobFile+" (a Kubernetes Indexed Job)")
	fs.BoolVar(&o.Slurm.Submit, "submit", false, "with -slurm: submit OUT/"+SbatchFile+" with sbatch and print the job id")
	fs.IntVar(&o.Slurm.CPUs, "slurm-cpus", 2, "CPUs per cell (also -workers of each cell)")
	fs.StringVar(&o.Slurm.Mem, "slurm-mem", "8G", "memory per cell, as sbatch --mem takes it")
	fs.StringVar(&o.Slurm.Time, "slurm-time", "24:00:00", "time limit per cell, as sbatch --time takes it")
	fs.StringVar(&o.Slurm.Partition, "slurm-partition", "", "partition (default: the cluster's)")
	fs.StringVar(&o.Slurm.Image, "k8s-image", "mtsgd:latest", "container image of the Kubernetes Job, with compare on its PATH")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := checkModes(o, set); err != nil {
		return o, err
	}
	if err := sysmem.CheckEnv(); err != nil {
		return o, err
	}
	if o.Slurm.Write {
		if err := o.Slurm.check(); err != nil {
			return o, err
		}
		if err := scriptSafe("-out", o.Out); err != nil {
			return o, err
		}
	}
	if err := cuda.CheckName(o.Device); err != nil {
		return o, err
	}
	o.Slurm.Device = o.Device
	if o.Cell >= 0 || o.Aggregate {
		// The comparison is the plan's.
		switch {
		case fs.NArg() > 0:
			return o, fmt.Errorf("unexpected arguments %q", fs.Args())
		case o.Workers < 1:
			return o, fmt.Errorf("-workers must be at least 1, got %d", o.Workers)
		}
		return o, nil
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case !slices.Contains(experiment.Datasets(), o.Dataset):
		return o, fmt.Errorf("-dataset %q is not one of %s", o.Dataset, strings.Join(experiment.Datasets(), ", "))
	case o.Dataset == files.Name:
		// compare has no -data: a sweep's cells name their data set only.
		return o, fmt.Errorf("-dataset %s: compare runs the built-in data sets; train your own files with train -data DIR", files.Name)
	case o.Workers < 1:
		return o, fmt.Errorf("-workers must be at least 1, got %d", o.Workers)
	}
	if proto != "" {
		p, ok := protocols[proto]
		if !ok {
			return o, fmt.Errorf("-protocol %q is not reduced, paper, paper-study or tuned", proto)
		}
		if !set["epochs"] {
			o.Epochs = p.Epochs
		}
		if !set["seeds"] {
			seeds = p.Seeds
		}
		if p.Runs != nil {
			if set["methods"] || set["seeds"] {
				return o, fmt.Errorf("-protocol %s lists its runs: -methods and -seeds cannot change them", proto)
			}
			var ms, ss []string
			for _, r := range p.Runs {
				if !slices.Contains(ms, r.Method) {
					ms = append(ms, r.Method)
				}
				if seed := strconv.FormatUint(r.Seed, 10); !slices.Contains(ss, seed) {
					ss = append(ss, seed)
				}
			}
			methods, seeds = strings.Join(ms, ","), strings.Join(ss, ",")
			o.Runs, o.Assess = p.Runs, true
		}
	}
	for _, f := range []string{"lrs", "extend-lrs", "search-epochs", "search-train-limit"} {
		if set[f] && proto != "tuned" {
			return o, fmt.Errorf("-%s needs -protocol tuned", f)
		}
	}
	if proto == "tuned" {
		if set["lr"] {
			return o, errors.New("-lr with -protocol tuned: the search chooses each method's rate; give the candidates with -lrs")
		}
		if !set["methods"] {
			methods = strings.Join(tunedProtocol.Methods, ",")
		}
		search.ScoreScales = tunedProtocol.Search.ScoreScales
		search.LRs = tunedProtocol.Search.LRs
		if lrs != "" {
			var err error
			if search.LRs, err = parseRates(lrs); err != nil {
				return o, fmt.Errorf("-lrs: %w", err)
			}
		}
		if extend != "" {
			var err error
			if search.Extend, err = parseRates(extend); err != nil {
				return o, fmt.Errorf("-extend-lrs: %w", err)
			}
			if !set["extend-lrs"] { // the default extends any grid upwards
				search.Extend = slices.DeleteFunc(search.Extend, func(r float64) bool { return r <= search.LRs[len(search.LRs)-1] })
			}
			if len(search.Extend) > 0 && search.Extend[0] <= search.LRs[len(search.LRs)-1] {
				return o, fmt.Errorf("-extend-lrs: %v is not above the largest of -lrs, %v", search.Extend[0], search.LRs[len(search.LRs)-1])
			}
		}
		switch {
		case search.Epochs < 1:
			return o, fmt.Errorf("-search-epochs must be at least 1, got %d", search.Epochs)
		case search.TrainLimit < 0:
			return o, fmt.Errorf("-search-train-limit must be 0 (as the final runs) or positive, got %d", search.TrainLimit)
		}
		o.Search = &search
	}
	for _, m := range strings.Split(methods, ",") {
		m = strings.TrimSpace(m)
		if _, err := parseSpec(m); err != nil {
			return o, fmt.Errorf("-methods: %w", err)
		}
		if slices.Contains(o.Methods, m) {
			return o, fmt.Errorf("-methods: %s listed twice", m)
		}
		o.Methods = append(o.Methods, m)
	}
	for _, f := range strings.Split(seeds, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return o, fmt.Errorf("-seeds: %q is not a seed", f)
		}
		o.Seeds = append(o.Seeds, s)
	}
	if o.Out == "" {
		o.Out = filepath.Join("runs", "compare-"+o.Dataset)
	}
	if o.Search == nil {
		return o, o.settings(o.Methods[0], o.Seeds[0]).Check()
	}
	o.Search.Seed = o.Seeds[0]
	for _, m := range o.Methods {
		cs, _ := o.Search.candidates(m)
		for _, c := range cs {
			if err := o.searchSettings(m, c).Check(); err != nil {
				return o, fmt.Errorf("%s at %s: %w", m, c, err)
			}
		}
	}
	return o, nil
}

// parseRates parses a comma-separated list of positive learning rates
// and sorts it.
func parseRates(list string) ([]float64, error) {
	var rates []float64
	for _, f := range strings.Split(list, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("%q is not a positive learning rate", f)
		}
		if slices.Contains(rates, r) {
			return nil, fmt.Errorf("%v listed twice", r)
		}
		rates = append(rates, r)
	}
	slices.Sort(rates)
	return rates, nil
}

// floats prints rates as -lrs takes them.
func floats(rates []float64) string {
	var fs []string
	for _, r := range rates {
		fs = append(fs, strconv.FormatFloat(r, 'g', -1, 64))
	}
	return strings.Join(fs, ",")
}

// settings are the data set's defaults for a method spec (NAME or
// NAME:PRESET) with the comparison's budget.
func (o Options) settings(method string, seed uint64) experiment.Settings {
	spec := mustSpec(method)
	s := experiment.Defaults(o.Dataset).ForMethod(spec.Name)
	if p, err := experiment.LookupPreset(spec.Preset); err == nil && spec.Preset != "" {
		p.Apply(&s)
	}
	s.Seed, s.Particles, s.TrainLimit, s.TestLimit = seed, o.Particles, o.TrainLimit, o.TestLimit
	if o.Epochs > 0 {
		s.Epochs = o.Epochs
	}
	if o.LR > 0 {
		s.LR = o.LR
	}
	if o.Optimizer != "" {
		s.Optimizer = o.Optimizer
	}
	spec.apply(&s)
	return s
}

// dispatch does what the flags ask: the whole comparison, or a step of
// a sweep.
func dispatch(ctx context.Context, o Options, stdout io.Writer) error {
	switch {
	case o.Aggregate:
		if err := existingOut(o.Out); err != nil {
			return err
		}
		return aggregate(o, stdout)
	case o.Slurm.Write:
		return writeSweep(ctx, o, stdout)
	case o.Plan:
		_, err := makePlan(o, stdout)
		return err
	}
	dev, err := cuda.OpenNamed(o.Device)
	if err != nil {
		return err
	}
	if dev != nil {
		defer dev.Close()
		log.WithField("device", dev.Name()).Info("GPU")
	}
	o.device = dev
	if o.Cell >= 0 {
		return runCell(ctx, o, o.Cell)
	}
	return run(ctx, o, stdout)
}

// checkModes refuses flags that do not go together: one of -plan, -cell,
// -aggregate and -slurm at most, the comparison flags only where a plan is
// made, and the Slurm ones only with -slurm.
func checkModes(o Options, set map[string]bool) error {
	var modes []string
	for _, m := range []string{"plan", "cell", "aggregate", "slurm"} {
		if set[m] {
			modes = append(modes, "-"+m)
		}
	}
	if len(modes) > 1 {
		return fmt.Errorf("%s: give one at most", strings.Join(modes, " and "))
	}
	if set["cell"] && o.Cell < 0 {
		return fmt.Errorf("-cell %d: cells are numbered from 0", o.Cell)
	}
	if set["cell"] || set["aggregate"] {
		if !set["out"] {
			return fmt.Errorf("%s needs -out, the sweep's directory", modes[0])
		}
		for _, f := range []string{"dataset", "protocol", "methods", "seeds", "epochs", "lr", "optimizer", "lrs", "extend-lrs", "search-epochs",
			"search-train-limit", "particles", "train-limit", "test-limit"} {
			if set[f] {
				return fmt.Errorf("-%s with %s: the comparison is the one in OUT/%s", f, modes[0], PlanFile)
			}
		}
	}
	if !set["slurm"] {
		for _, f := range []string{"submit", "slurm-cpus", "slurm-mem", "slurm-time", "slurm-partition", "k8s-image"} {
			if set[f] {
				return fmt.Errorf("-%s needs -slurm", f)
			}
		}
	}
	return nil
}

// run writes the plan, trains what is not yet trained, cell after cell
// in the plan's order, and writes the tables (for the tuned protocol by
// aggregate, which reads the search's choices).
func run(ctx context.Context, o Options, stdout io.Writer) error {
	sysmem.CollectEarly()
	release, err := lock(o.Out)
	if err != nil {
		return err
	}
	p := o.plan()
	if err := writePlan(o.Out, p); err != nil {
		release()
		return err
	}
	results := map[string][][]experiment.MetricsLine{} // method → per seed, last epoch's test lines
	var d *experiment.Data
	for i, c := range p.Cells {
		if i > 0 && c.Seed != p.Cells[i-1].Seed {
			d = nil // each seed loads its own data (its validation split)
		}
		skipped, err := skipExtension(o.Out, p, c)
		if skipped {
			continue
		}
		var s experiment.Settings
		if err == nil {
			s, err = cellSettings(o.Out, p, c)
		}
		if err == nil {
			var res runResult
			res, err = runOne(ctx, o, s, c, &d)
			results[c.Method] = append(results[c.Method], lastTest(res.History))
		}
		if err != nil {
			release()
			return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
		}
	}
	if p.Search != nil {
		release()
		return aggregate(o, stdout)
	}
	defer release()
	return writeTables(o, results, nil, "", stdout)
}

// writeTables writes compare.md (with note after the table), compare.csv
// and the chart from each method's per-seed last-epoch test lines, and
// prints the Markdown. chosen labels each method's tuned choice (nil:
// no tuning).
func writeTables(o Options, results map[string][][]experiment.MetricsLine, chosen map[string]string, note string, stdout io.Writer) error {
	rows := summarise(o.Methods, results)
	md, csv := markdown(o.Dataset, rows, chosen)+note, csvTable(rows, chosen)
	files := map[string]string{"compare.md": md, "compare.csv": csv}
	if chosen != nil {
		files[SummaryFile] = summary(o.Dataset, o.Methods, rows, chosen)
		if v := verdict(o.Methods, rows); v != "" {
			files[SummaryFile] += "\n" + v
		}
	}
	for name, text := range files {
		path := filepath.Join(o.Out, name)
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
			return err
		}
	}
	if len(rows) > 0 && !rows[0].Regression {
		var methods []string // those with a finished run
		for _, m := range o.Methods {
			if len(results[m]) > 0 {
				methods = append(methods, m)
			}
		}
		chart := filepath.Join(o.Out, "compare.png")
		if err := atomicfile.Write(chart, 0o644, func(w io.Writer) error { return writeChart(w, o.Dataset, methods, rows) }); err != nil {
			return fmt.Errorf("writing %s: %w", chart, err)
		}
	}
	if chosen != nil {
		md += "\n" + files[SummaryFile]
	}
	_, err := io.WriteString(stdout, md)
	return err
}

// lock creates dir if needed and locks it for this process (package
// runlock) until release is called.
func lock(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating output directory: %w", err)
	}
	return runlock.Hold(dir, func(err error) { log.Warn(err) })
}

// runOne finishes cell c's run with settings s and returns its result,
// which it writes to the run directory's ResultFile. The data set is
// loaded on first need and shared by the seed's runs. A run of the tuned
// protocol that diverges is a result, not an error: the search never
// chooses it, and the tables list it.
func runOne(ctx context.Context, o Options, s experiment.Settings, c Cell, d **experiment.Data) (runResult, error) {
	dir := filepath.Join(o.Out, c.Dir)
	release, err := lock(dir)
	if err != nil {
		return runResult{}, err
	}
	defer release()
	res, ok, err := readResult(dir)
	switch {
	case err != nil:
		return runResult{}, err
	case ok && !sameRun(res.Settings, s):
		return runResult{}, otherRun(dir, res.Settings, s)
	case ok && res.Settings.Epochs == s.Epochs:
		log.WithField("run", dir).Info("finished already")
		return assessRun(ctx, o, dir, res)
	}
	if *d == nil {
		loaded, _, err := experiment.LoadData(s, o.DataDir)
		if err != nil {
			return runResult{}, err
		}
		*d = &loaded
	}
	ck, err := checkpoints.Load(filepath.Join(dir, "last"))
	switch {
	case err == nil:
		saved, err := experiment.ReadSettings(ck)
		if err != nil {
			return runResult{}, err
		}
		asked := s
		asked.Epochs = saved.Epochs // a longer budget extends a run
		n := (*d).Train.Len()
		if asked.TrainLimit > 0 {
			n = min(n, asked.TrainLimit)
		}
		asked.Resolve(n) // a saved run records its resolved weights
		if saved != asked {
			return runResult{}, otherRun(dir, saved, s)
		}
		if ck.Epoch >= s.Epochs && ck.Batch == 0 {
			log.WithField("run", dir).Info("finished already")
			var state struct{ History []experiment.MetricsLine }
			if err := json.Unmarshal(ck.Metrics, &state); err != nil {
				return runResult{}, err
			}
			saved.Epochs = s.Epochs
			res := runResult{Settings: saved, History: state.History}
			if err := writeResult(dir, res); err != nil {
				return runResult{}, err
			}
			return assessRun(ctx, o, dir, res)
		}
	case errors.Is(err, os.ErrNotExist):
		ck = nil
	default:
		return runResult{}, err
	}
	var r *experiment.Run
	if ck != nil {
		log.WithFields(log.Fields{"run": dir, "epoch": ck.Epoch}).Info("resuming")
		if r, err = experiment.RestoreWith(ck, **d, experiment.Components{Device: o.device}, o.Workers); err == nil {
			r.Settings.Epochs = s.Epochs
		}
	} else {
		log.WithField("run", dir).Info("training")
		r, err = experiment.NewWith(s, **d, experiment.Components{Device: o.device}, o.Workers)
	}
	if err != nil {
		return runResult{}, err
	}
	r.Out = dir
	r.Hooks.EpochEnd = func(epoch int, lines []experiment.MetricsLine) {
		log.WithFields(log.Fields{"run": dir, "epoch": epoch + 1, "seconds": fmt.Sprintf("%.0f", lines[0].Seconds)}).Info("epoch done")
		// The chart is a view of metrics.jsonl: failing to draw it costs
		// no training.
		if err := curves.WriteRun(filepath.Join(dir, curves.FileName), r.History()); err != nil {
			log.Warn(err)
		}
	}
	res = runResult{Settings: r.Settings}
	if err := r.Train(ctx); err != nil {
		if c.Stage == "" || !errors.Is(err, experiment.ErrDiverged) {
			return runResult{}, err
		}
		log.WithField("run", dir).Warn(err)
		res.Diverged = err.Error()
	}
	res.History = r.History()
	if err := writeResult(dir, res); err != nil {
		return runResult{}, err
	}
	return assessRun(ctx, o, dir, res)
}

// assessRun adds to a study's finished run its assessment (study.go), once:
// a run already assessed, one that diverged and one outside a study are
// returned as they are. The result file is written first without it, so
// that a failed assessment leaves the training's scores in place and a
// rerun assesses again.
func assessRun(ctx context.Context, o Options, dir string, res runResult) (runResult, error) {
	if !o.Assess || res.Assessed != nil || res.Diverged != "" || res.Skipped != "" {
		return res, nil
	}
	a, err := assess(ctx, o, dir, res.Settings.Dataset)
	if err != nil {
		return runResult{}, err
	}
	res.Assessed = a
	return res, writeResult(dir, res)
}

// lastTest returns the test lines of the last epoch in history.
func lastTest(history []experiment.MetricsLine) []experiment.MetricsLine {
	var out []experiment.MetricsLine
	last := 0
	for _, l := range history {
		last = max(last, l.Epoch)
	}
	for _, l := range history {
		if l.Epoch == last && l.Split == "test" {
			out = append(out, l)
		}
	}
	return out
}
