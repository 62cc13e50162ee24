package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	_ "github.com/mtsgd/mtsgd/internal/openblas" // OpenBLAS when built with -tags openblas
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// Options is everything a comparison depends on: the comparison itself
// (its methods, seeds and budget; with the tuned protocol its search, for
// a study its runs), and where and how this machine runs it.
type Options struct {
	plan.Comparison
	Out     string
	DataDir string
	Workers int
	Device  string // cpu or cuda

	// What to do instead of running the whole comparison (a sweep, see
	// sweep.go): write OUT/plan.json only; run one cell of it (-1: none);
	// tabulate its finished cells; write the Slurm and Kubernetes files.
	Plan bool
	Cell int
	// ReplacePlan lets -plan (or -slurm) replace an OUT/plan.json that
	// differs from the flags' other than by cells appended.
	ReplacePlan bool
	Aggregate   bool
	Slurm       SlurmOptions

	device gpu.Device // opened from Device for the runs; nil: the CPU
}

// DefaultMethods are the methods compare trains unless -methods names
// others: every method registered as Compared (experiment.Method), in the
// registry's order, and a method that takes MT-SGD's presets once per
// preset, the default preset first and the others by name.
func DefaultMethods() []string {
	presets := []string{experiment.DefaultPreset}
	var others []string
	for _, p := range experiment.Presets {
		if p.Name != experiment.DefaultPreset {
			others = append(others, p.Name)
		}
	}
	slices.Sort(others)
	return comparedMethods(append(presets, others...))
}

// comparedMethods are the specs of every method registered as Compared,
// in the registry's order, a method that takes MT-SGD's presets once per
// preset of presets.
func comparedMethods(presets []string) []string {
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

// tunedMethods are the methods -protocol tuned compares unless -methods
// names others: the compared ones, MT-SGD in the default preset alone.
var tunedMethods = comparedMethods([]string{experiment.DefaultPreset})

func main() {
	cli.Main(cli.Command[Options]{Name: "compare", Parse: parseFlags, Run: func(ctx context.Context, o Options) error { return dispatch(ctx, o, os.Stdout) }, Explain: explain})
}

// explain says how to go on after an interruption, and reports the
// cells -aggregate found missing as a warning.
func explain(_ Options, err error) bool {
	switch {
	case errors.Is(err, experiment.ErrInterrupted):
		log.Warn("interrupted; rerun the same command to continue")
	case errors.Is(err, plan.ErrMissing):
		log.Warn(err)
	default:
		return false
	}
	return true
}

// parseFlags parses compare's command line into Options and checks it: the
// flags every mode shares here, a comparison's own in comparisonFlags.
func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	var c lists
	fs := newFlagSet(&o, &c, stderr)
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
	return o, comparisonFlags(&o, &c, fs.Args(), set)
}

// comparisonFlags checks the flags of a comparison given by flags rather
// than a plan, and completes o from them: the protocol's settings, the
// tuned search's, the methods and seeds, a default -out. set holds the
// flags given.
func comparisonFlags(o *Options, c *lists, args []string, set map[string]bool) error {
	switch {
	case len(args) > 0:
		return fmt.Errorf("unexpected arguments %q", args)
	case !slices.Contains(experiment.Datasets(), o.Dataset):
		return fmt.Errorf("-dataset %q is not one of %s", o.Dataset, strings.Join(experiment.Datasets(), ", "))
	case o.Dataset == files.Name:
		// compare has no -data: a sweep's cells name their data set only.
		return fmt.Errorf("-dataset %s: compare runs the built-in data sets; train your own files with train -data DIR", files.Name)
	case o.Workers < 1:
		return fmt.Errorf("-workers must be at least 1, got %d", o.Workers)
	}
	if err := applyProtocol(o, c, set); err != nil {
		return err
	}
	if o.Model != "" {
		if _, err := experiment.LookupModel(o.Model); err != nil {
			return fmt.Errorf("-model: %w", err)
		}
	}
	for _, f := range []string{"lrs", "extend-lrs", "search-epochs", "search-train-limit"} {
		if set[f] && c.proto != "tuned" {
			return fmt.Errorf("-%s needs -protocol tuned", f)
		}
	}
	if c.proto == "tuned" {
		search, err := tunedSearch(c, set)
		if err != nil {
			return err
		}
		o.Search = search
	}
	if err := c.parse(o); err != nil {
		return err
	}
	if o.Out == "" {
		o.Out = filepath.Join("runs", "compare-"+o.Dataset)
	}
	if o.Search != nil {
		o.Search.Seed = o.Seeds[0]
	}
	return o.Check()
}

// lists are the flags that reach Options only once parsed: the lists of
// methods and seeds, the protocol, and the tuned search's settings.
type lists struct {
	methods, seeds, proto, lrs, extend, optimizer string
	search                                        plan.Search
}

// parse reads the lists of methods and seeds, and the optimiser, into o.
func (c *lists) parse(o *Options) error {
	var err error
	if o.Optimizer, err = experiment.ParseOptimizer(c.optimizer); err != nil {
		return err
	}
	for _, m := range strings.Split(c.methods, ",") {
		m = strings.TrimSpace(m)
		if err := plan.CheckSpec(m); err != nil {
			return fmt.Errorf("-methods: %w", err)
		}
		if slices.Contains(o.Methods, m) {
			return fmt.Errorf("-methods: %s listed twice", m)
		}
		o.Methods = append(o.Methods, m)
	}
	for _, f := range strings.Split(c.seeds, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds: %q is not a seed", f)
		}
		o.Seeds = append(o.Seeds, s)
	}
	return nil
}

// newFlagSet declares compare's flags into o and c.
func newFlagSet(o *Options, c *lists, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: compare -dataset NAME [flags]   (see `go doc ./cmd/compare`)")
		fs.PrintDefaults()
	}
	o.Particles = 5
	cli.SettingsFlags(fs, cli.Settings{Dataset: &o.Dataset, Particles: &o.Particles, LR: &o.LR, Optimizer: &c.optimizer,
		Epochs: &o.Epochs, TrainLimit: &o.TrainLimit, TestLimit: &o.TestLimit}, cli.SettingsHelp{
		Dataset:   strings.Join(experiment.Datasets(), ", ") + "; required",
		LR:        "default: the data set's",
		Optimizer: "for every method; default: the data set's",
		Epochs:    "per run; default: the data set's; with -protocol tuned, per final run",
	})
	fs.StringVar(&c.methods, "methods", strings.Join(DefaultMethods(), ","), "comma-separated methods, NAME or NAME:PRESET: "+strings.Join(experiment.MethodNames(nil), ", "))
	fs.StringVar(&c.seeds, "seeds", "1", "comma-separated seeds")
	fs.StringVar(&o.Model, "model", "", "every run's model, one of "+strings.Join(experiment.ModelNames(), ", ")+" (default: the data set's)")
	fs.StringVar(&c.proto, "protocol", "", "budget: reduced (5 epochs, seed 1), paper (100 epochs, seeds 1,2,3), paper-study (the paper's protocol, its runs listed one by one, assessed), paper-celeba (the paper's 40-attribute CelebA table, its runs listed, per-attribute tables and radar charts) or tuned (a learning-rate search on validation, then 3 epochs, seeds 1,2,3); -epochs and -seeds override it")
	fs.StringVar(&c.lrs, "lrs", "", "with -protocol tuned: the candidate learning rates, comma-separated (default "+plan.Rates(plan.Tuned.Search.LRs)+")")
	fs.StringVar(&c.extend, "extend-lrs", plan.Rates(plan.Tuned.Search.Extend), "with -protocol tuned: rates above -lrs, each tried while a method's best so far is the largest it tried (\"\": none)")
	fs.IntVar(&c.search.Epochs, "search-epochs", plan.Tuned.Search.Epochs, "with -protocol tuned: epochs per search run")
	fs.IntVar(&c.search.TrainLimit, "search-train-limit", plan.Tuned.Search.TrainLimit, "with -protocol tuned: search runs train on the first N examples (0: as the final runs)")
	cli.Out(fs, "output directory (default runs/compare-DATASET)", func(v string) error { o.Out = v; return nil })
	cli.DataDir(fs, &o.DataDir, "")
	cli.Workers(fs, &o.Workers, "")
	cli.Device(fs, &o.Device, "")
	fs.BoolVar(&o.Plan, "plan", false, "write OUT/"+plan.PlanFile+", the comparison's cells, and stop")
	fs.BoolVar(&o.ReplacePlan, "replace-plan", false, "with -plan or -slurm: replace an OUT/"+plan.PlanFile+" of another comparison (its runs' result files then no longer count)")
	fs.IntVar(&o.Cell, "cell", -1, "run cell `I` of OUT/"+plan.PlanFile+" only (the comparison flags come from the plan)")
	fs.BoolVar(&o.Aggregate, "aggregate", false, "tabulate the finished cells of OUT/"+plan.PlanFile+"; status 5 when some are missing")
	fs.BoolVar(&o.Slurm.Write, "slurm", false, "write the plan, OUT/"+plan.SbatchFile+" (a Slurm job array over it) and OUT/"+JobFile+" (a Kubernetes Indexed Job)")
	fs.BoolVar(&o.Slurm.Submit, "submit", false, "with -slurm: submit OUT/"+plan.SbatchFile+" with sbatch and print the job id")
	fs.IntVar(&o.Slurm.CPUs, "slurm-cpus", 2, "CPUs per cell (also -workers of each cell)")
	fs.StringVar(&o.Slurm.Mem, "slurm-mem", "8G", "memory per cell, as sbatch --mem takes it")
	fs.StringVar(&o.Slurm.Time, "slurm-time", "24:00:00", "time limit per cell, as sbatch --time takes it")
	fs.StringVar(&o.Slurm.Partition, "slurm-partition", "", "partition (default: the cluster's)")
	fs.StringVar(&o.Slurm.Image, "k8s-image", "mtsgd:latest", "container image of the Kubernetes Job, with compare on its PATH")
	return fs
}

// applyProtocol sets the budget -protocol names: epochs and seeds unless
// given, and for a study its runs.
func applyProtocol(o *Options, c *lists, set map[string]bool) error {
	if c.proto != "" {
		p, ok := plan.Protocols[c.proto]
		if !ok {
			return fmt.Errorf("-protocol %q is not one of %s", c.proto, strings.Join(slices.Sorted(maps.Keys(plan.Protocols)), ", "))
		}
		if p.Dataset != "" && o.Dataset != p.Dataset {
			return fmt.Errorf("-protocol %s is the paper's %s table: it needs -dataset %s", c.proto, p.Dataset, p.Dataset)
		}
		o.Tasks, o.Attributes = p.Tasks, p.Attributes
		if !set["epochs"] {
			o.Epochs = p.Epochs
		}
		if !set["seeds"] {
			c.seeds = p.Seeds
		}
		if p.Runs != nil {
			if set["methods"] || set["seeds"] {
				return fmt.Errorf("-protocol %s lists its runs: -methods and -seeds cannot change them", c.proto)
			}
			runs, left := p.RunsFor(o.Dataset)
			for _, why := range left {
				log.Warn("-protocol " + c.proto + ": " + why)
			}
			var ms, ss []string
			for _, r := range runs {
				if !slices.Contains(ms, r.Method) {
					ms = append(ms, r.Method)
				}
				if seed := strconv.FormatUint(r.Seed, 10); !slices.Contains(ss, seed) {
					ss = append(ss, seed)
				}
			}
			c.methods, c.seeds = strings.Join(ms, ","), strings.Join(ss, ",")
			o.Runs, o.Assess = runs, p.Assess
		}
	}
	return nil
}

// tunedSearch is -protocol tuned's learning-rate search as the flags set
// it.
func tunedSearch(c *lists, set map[string]bool) (*plan.Search, error) {
	if set["lr"] {
		return nil, errors.New("-lr with -protocol tuned: the search chooses each method's rate; give the candidates with -lrs")
	}
	if !set["methods"] {
		c.methods = strings.Join(tunedMethods, ",")
	}
	c.search.ScoreScales = plan.Tuned.Search.ScoreScales
	c.search.LRs = plan.Tuned.Search.LRs
	if c.lrs != "" {
		var err error
		if c.search.LRs, err = parseRates(c.lrs); err != nil {
			return nil, fmt.Errorf("-lrs: %w", err)
		}
	}
	if c.extend != "" {
		var err error
		if c.search.Extend, err = parseRates(c.extend); err != nil {
			return nil, fmt.Errorf("-extend-lrs: %w", err)
		}
		if !set["extend-lrs"] { // the default extends any grid upwards
			c.search.Extend = slices.DeleteFunc(c.search.Extend, func(r float64) bool { return r <= c.search.LRs[len(c.search.LRs)-1] })
		}
		if len(c.search.Extend) > 0 && c.search.Extend[0] <= c.search.LRs[len(c.search.LRs)-1] {
			return nil, fmt.Errorf("-extend-lrs: %v is not above the largest of -lrs, %v", c.search.Extend[0], c.search.LRs[len(c.search.LRs)-1])
		}
	}
	switch {
	case c.search.Epochs < 1:
		return nil, fmt.Errorf("-search-epochs must be at least 1, got %d", c.search.Epochs)
	case c.search.TrainLimit < 0:
		return nil, fmt.Errorf("-search-train-limit must be 0 (as the final runs) or positive, got %d", c.search.TrainLimit)
	}
	return &c.search, nil
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

// dispatch does what the flags ask: the whole comparison, or a step of
// a sweep.
func dispatch(ctx context.Context, o Options, stdout io.Writer) error {
	switch {
	case o.Aggregate:
		if err := existingOut(o.Out); err != nil {
			return err
		}
		return plan.Aggregate(o.Out, stdout)
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

// existingOut refuses an -out that is not a directory already: -aggregate
// reads a sweep, and would otherwise create a mistyped OUT and its lock
// before finding no plan there.
func existingOut(out string) error {
	st, err := os.Stat(out)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s: not a directory", out)
	}
	if err != nil {
		return cli.Usage(fmt.Errorf("-out: %w (the sweep's directory)", err))
	}
	return nil
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
	if set["replace-plan"] && !set["plan"] && !set["slurm"] {
		return errors.New("-replace-plan goes with -plan or -slurm, which write the plan")
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
				return fmt.Errorf("-%s with %s: the comparison is the one in OUT/%s", f, modes[0], plan.PlanFile)
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
	release, err := cli.LockRun(o.Out, true)
	if err != nil {
		return err
	}
	p := o.plan()
	if err := plan.Write(o.Out, p); err != nil {
		release()
		return err
	}
	results := map[string][][]experiment.MetricsLine{} // method → per seed, last epoch's test lines
	var d *experiment.Data
	for i, c := range p.Cells {
		if prev := p.Cells[max(i-1, 0)]; c.Seed != prev.Seed || c.Settings.Tasks != prev.Settings.Tasks {
			d = nil // each seed loads its own data (its validation split), as do other tasks
		}
		skipped, err := plan.SkipExtension(o.Out, p, c)
		if skipped {
			continue
		}
		var s experiment.Settings
		if err == nil {
			s, err = plan.CellSettings(o.Out, p, c)
		}
		if err == nil {
			var res plan.Result
			res, err = runOne(ctx, o, s, c, &d)
			results[c.Method] = append(results[c.Method], plan.LastTest(res.History))
		}
		if err != nil {
			release()
			return fmt.Errorf("cell %d (%s seed %d): %w", i, c.Method, c.Seed, err)
		}
	}
	if p.Search != nil {
		release()
		return plan.Aggregate(o.Out, stdout)
	}
	defer release()
	return study.WriteComparison(o.Out, study.Comparison{Dataset: o.Dataset, Methods: o.Methods}, results, "", stdout)
}

// runOne finishes cell c's run with settings s and returns its result,
// which it writes to the run directory's ResultFile. The data set is
// loaded on first need and shared by the seed's runs. A run of the tuned
// protocol that diverges is a result, not an error: the search never
// chooses it, and the tables list it.
func runOne(ctx context.Context, o Options, s experiment.Settings, c plan.Cell, d **experiment.Data) (plan.Result, error) {
	dir := filepath.Join(o.Out, c.Dir)
	release, err := cli.LockRun(dir, true)
	if err != nil {
		return plan.Result{}, err
	}
	defer release()
	res, ok, err := plan.ReadResult(dir)
	switch {
	case err != nil:
		return plan.Result{}, err
	case ok && !plan.SameRun(res.Settings, s):
		return plan.Result{}, plan.OtherRun(dir, res.Settings, s)
	case ok && res.Settings.Epochs == s.Epochs:
		log.WithField("run", dir).Info("finished already")
		return assessRun(ctx, o, dir, res)
	}
	if *d == nil {
		loaded, _, err := experiment.LoadData(s, o.DataDir)
		if err != nil {
			return plan.Result{}, err
		}
		*d = &loaded
	}
	ck, finished, err := lastCheckpoint(dir, s, (*d).Train.Len())
	switch {
	case err != nil:
		return plan.Result{}, err
	case finished != nil:
		log.WithField("run", dir).Info("finished already")
		if err := plan.WriteResult(dir, *finished); err != nil {
			return plan.Result{}, err
		}
		return assessRun(ctx, o, dir, *finished)
	}
	if res, err = train(ctx, o, dir, s, c, ck, **d); err != nil {
		return plan.Result{}, err
	}
	if err := plan.WriteResult(dir, res); err != nil {
		return plan.Result{}, err
	}
	return assessRun(ctx, o, dir, res)
}

// lastCheckpoint reads the last/ checkpoint of the run in dir, which
// must have been saved with settings s (but for the budget: a longer one
// extends a run) on a training split of n examples; nil if the run has
// none. A checkpoint at the end of s's budget comes back as the finished
// run's result too.
func lastCheckpoint(dir string, s experiment.Settings, n int) (*checkpoints.Checkpoint, *plan.Result, error) {
	ck, err := checkpoints.Load(filepath.Join(dir, "last"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, err
	}
	saved, err := experiment.ReadSettings(ck)
	if err != nil {
		return nil, nil, err
	}
	asked := s
	asked.Epochs = saved.Epochs
	if asked.TrainLimit > 0 {
		n = min(n, asked.TrainLimit)
	}
	asked.Resolve(n) // a saved run records its resolved weights
	if !saved.Equal(asked) {
		return nil, nil, plan.OtherRun(dir, saved, s)
	}
	if ck.Epoch < s.Epochs || ck.Batch != 0 {
		return ck, nil, nil
	}
	var state struct{ History []experiment.MetricsLine }
	if err := json.Unmarshal(ck.Metrics, &state); err != nil {
		return nil, nil, err
	}
	saved.Epochs = s.Epochs
	return ck, &plan.Result{Settings: saved, History: state.History}, nil
}

// train trains the run in dir with settings s on d, from checkpoint ck
// if there is one, to the end of s's budget. A final run of a plan that
// diverges comes back with its history and why (the tables leave it
// out); any other run's divergence is its error.
func train(ctx context.Context, o Options, dir string, s experiment.Settings, c plan.Cell, ck *checkpoints.Checkpoint, d experiment.Data) (plan.Result, error) {
	var r *experiment.Run
	var err error
	if ck != nil {
		log.WithFields(log.Fields{"run": dir, "epoch": ck.Epoch}).Info("resuming")
		if r, err = experiment.RestoreWith(ck, d, experiment.Components{Device: o.device}, o.Workers); err == nil {
			r.Settings.Epochs = s.Epochs
		}
	} else {
		log.WithField("run", dir).Info("training")
		r, err = experiment.NewWith(s, d, experiment.Components{Device: o.device}, o.Workers)
	}
	if errors.Is(err, sysmem.ErrTooBig) {
		// Every run's settings come from the flags: they ask for more
		// memory than the machine has.
		err = cli.Usage(err)
	}
	if err != nil {
		return plan.Result{}, err
	}
	defer closeRun(r, dir)
	r.Out = dir
	r.Hooks.EpochEnd = func(epoch int, lines []experiment.MetricsLine) {
		log.WithFields(log.Fields{"run": dir, "epoch": epoch + 1, "seconds": fmt.Sprintf("%.0f", lines[0].Seconds)}).Info("epoch done")
		// The chart is a view of metrics.jsonl: failing to draw it costs
		// no training.
		if err := curves.WriteRun(filepath.Join(dir, curves.FileName), r.History()); err != nil {
			log.Warn(err)
		}
	}
	res := plan.Result{Settings: r.Settings}
	if err := r.Train(ctx); err != nil {
		if c.Stage == "" || !errors.Is(err, experiment.ErrDiverged) {
			return plan.Result{}, err
		}
		log.WithField("run", dir).Warn(err)
		res.Diverged = err.Error()
	}
	res.History = r.History()
	return res, nil
}

// closeRun frees the device memory run r holds, so that the next run of
// the same process has it. The run has saved its checkpoints by then: a
// failure is logged, not returned.
func closeRun(r *experiment.Run, dir string) {
	if err := r.Close(); err != nil {
		log.WithField("run", dir).Warnf("freeing the run's device memory: %v", err)
	}
}

// assessRun adds to a study's finished run its assessment (study.Assess), once:
// a run already assessed, one that diverged and one outside a study are
// returned as they are. The result file is written first without it, so
// that a failed assessment leaves the training's scores in place and a
// rerun assesses again.
func assessRun(ctx context.Context, o Options, dir string, res plan.Result) (plan.Result, error) {
	if !o.Assess || res.Assessed != nil || res.Diverged != "" || res.Skipped != "" {
		return res, nil
	}
	a, err := study.Assess(ctx, dir, res.Settings.Dataset, o.DataDir, experiment.Components{Device: o.device}, o.Workers)
	if err != nil {
		return plan.Result{}, err
	}
	res.Assessed = a
	return res, plan.WriteResult(dir, res)
}
