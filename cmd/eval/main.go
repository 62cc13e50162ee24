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
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	_ "github.com/mtsgd/mtsgd/internal/openblas" // OpenBLAS when built with -tags openblas
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/metrics"
)

// Options is everything an evaluation depends on.
type Options struct {
	Checkpoint  string
	Split       string
	Limit       int // −1: as the run
	JSON        bool
	Reliability string
	DataDir     string
	Data        string // where a run's own files are now; "" where the checkpoint says
	Workers     int
	Device      string // cpu or cuda
	Temperature bool   // report the temperature-scaled scores too
	OOD         string // data set to detect as out of distribution; "" none
}

func main() {
	cli.Main(cli.Command[Options]{Name: "eval", Parse: parseFlags,
		Run: func(ctx context.Context, o Options) error { return run(ctx, o, os.Stdout) }})
}

func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: eval -ckpt DIR [flags]   (see `go doc ./cmd/eval`)")
		fs.PrintDefaults()
	}
	cli.Checkpoint(fs, &o.Checkpoint, "")
	fs.StringVar(&o.Split, "split", "test", "split to evaluate: test, valid (where the data set has one) or train")
	fs.IntVar(&o.Limit, "limit", -1, "evaluate the first N examples (default: as the run was evaluated; 0: all)")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of the table")
	fs.StringVar(&o.Reliability, "reliability", "", "write a reliability diagram per task (PNG) into this directory")
	cli.DataDir(fs, &o.DataDir, "")
	cli.Data(fs, &o.Data, "a run on your own files: the directory they are in now, if it has moved (the files' hashes must match the checkpoint's)")
	cli.Workers(fs, &o.Workers, "")
	cli.Device(fs, &o.Device, "")
	cli.Temperature(fs, &o.Temperature, "reported beside the raw scores")
	fs.StringVar(&o.OOD, "ood", "", "score out-of-distribution detection against this data set's test inputs (AUROC of entropy and mutual information): "+strings.Join(experiment.OODDatasets(), ", "))
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case set["limit"] && o.Limit < 0:
		// -1, the default, means the run's own limit: given, a negative
		// number is a mistake.
		return o, fmt.Errorf("-limit must be 0 (all) or positive, got %d", o.Limit)
	case o.Checkpoint == "":
		return o, errors.New("-ckpt is required")
	case o.Split != "test" && o.Split != "train" && o.Split != "valid":
		return o, fmt.Errorf("-split must be test, valid or train, got %q", o.Split)
	case o.Workers < 1:
		return o, fmt.Errorf("-workers must be at least 1, got %d", o.Workers)
	}
	if o.OOD != "" {
		if err := experiment.CheckOOD(experiment.Settings{}, o.OOD); err != nil {
			return o, err
		}
	}
	if err := sysmem.CheckEnv(); err != nil {
		return o, err
	}
	return o, cuda.CheckName(o.Device)
}

// openRun restores the run of the checkpoint -ckpt names. A checkpoint
// of a run that a train is writing (its directory locked: runlock.Holder)
// may be read in the middle of a save, its files and its manifest from
// two epochs: eval reads it again, a few times, and if it still cannot,
// says that the train is writing it rather than that it is damaged.
func openRun(o Options, dev gpu.Device) (*experiment.Run, string, error) {
	const attempts = 4
	for i := 1; ; i++ {
		r, dir, err := experiment.OpenFiles(o.Checkpoint, o.DataDir, o.Data, experiment.Components{Device: dev}, o.Workers)
		if err == nil {
			return r, dir, nil
		}
		runDir := filepath.Dir(filepath.Clean(dir))
		pid, held := runlock.Holder(runDir)
		if !held {
			return nil, dir, err
		}
		if i == attempts {
			return nil, dir, fmt.Errorf("%s could not be read while process %d (a train; lock file %s) writes the run: evaluate it once the run ends, or %s between saves: %w",
				dir, pid, filepath.Join(runDir, runlock.Name), filepath.Join(runDir, "best"), err)
		}
		log.WithField("checkpoint", dir).Warnf("process %d is writing this run; reading the checkpoint again", pid)
		time.Sleep(checkpointRetry)
	}
}

// checkpointRetry is how long eval waits before reading again a
// checkpoint that a train is saving: a save of the paper's checkpoints
// takes well under a second.
var checkpointRetry = time.Second

// checkOOD refuses, from the checkpoint's settings alone and before its
// data load, an -ood data set that cannot be scored against the run
// (experiment.CheckOOD): a bad command line. A checkpoint that cannot be
// read is left to the load to report.
func checkOOD(o Options) error {
	if o.OOD == "" {
		return nil
	}
	c, err := checkpoints.LoadManifest(checkpoints.Locate(o.Checkpoint))
	if err != nil {
		return nil
	}
	var s experiment.Settings
	if json.Unmarshal(c.Settings, &s) != nil {
		return nil
	}
	if err := experiment.CheckOOD(s, o.OOD); err != nil {
		return cli.Usage(err)
	}
	return nil
}

// Report is what -json prints.
type Report struct {
	Checkpoint string              `json:"checkpoint"`
	Dataset    string              `json:"dataset"`
	Method     string              `json:"method"`
	Epoch      int                 `json:"epoch"`
	Step       int                 `json:"step"`
	Split      string              `json:"split"`
	Examples   int                 `json:"examples"`
	Tasks      []engine.TaskScores `json:"tasks"`
	// Temperatures are the per-task temperatures of Calibrated, and
	// TemperatureSource where they come from; both absent without
	// temperature scaling.
	Temperatures      []float64 `json:"temperatures,omitempty"`
	TemperatureSource string    `json:"temperature_source,omitempty"`
	// Calibrated are the ensemble's scores per task after temperature
	// scaling.
	Calibrated []metrics.Score `json:"calibrated,omitempty"`
	// OOD is the out-of-distribution detection of -ood.
	OOD *experiment.OOD `json:"ood,omitempty"`
}

func run(ctx context.Context, o Options, stdout io.Writer) error {
	sysmem.CollectEarly()
	dev, err := cuda.OpenNamed(o.Device)
	if err != nil {
		return err
	}
	if dev != nil {
		defer dev.Close()
	}
	if err := checkReliability(o.Reliability); err != nil {
		return err
	}
	if err := checkOOD(o); err != nil {
		return err
	}
	r, dir, err := openRun(o, dev)
	if err != nil {
		return err
	}
	if f := r.Settings.Files; f != nil && f.SHA256 == nil {
		log.WithField("checkpoint", dir).Warn("the checkpoint records no hashes of its data files (it predates them): a change of their content is not detected")
	}
	set, err := r.Split(o.Split, o.Limit)
	if err != nil {
		return err
	}
	out, labels, err := r.Trainer.Outputs(ctx, set)
	if err != nil {
		return err
	}
	scores, err := r.Trainer.Score(out, labels)
	if err != nil {
		return err
	}
	rep := Report{Checkpoint: dir, Dataset: r.Settings.Dataset, Method: r.Settings.Method, Epoch: r.Epoch(), Step: r.Trainer.Steps,
		Split: o.Split, Examples: set.Len(), Tasks: scores}
	diverged := divergence(r.Trainer.Particles, scores)
	if diverged == nil && o.Temperature {
		if err := calibrate(ctx, r, set.Tasks(), out, labels, &rep); err != nil {
			return err
		}
	}
	if o.OOD != "" {
		if diverged != nil {
			return errors.Join(fmt.Errorf("-ood: not scored"), diverged)
		}
		if rep.OOD, err = detectOOD(ctx, o, r, set.Tasks(), out); err != nil {
			return err
		}
	}
	if o.Reliability != "" {
		if err := writeDiagrams(o.Reliability, rep); err != nil {
			return errors.Join(err, diverged)
		}
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		var v any = rep
		if diverged != nil {
			v = nullNonFinite(rep)
		}
		if err := enc.Encode(v); err != nil {
			return errors.Join(err, diverged)
		}
		return diverged
	}
	if err := writeTable(stdout, rep); err != nil {
		return errors.Join(err, diverged)
	}
	return diverged
}

// detectOOD scores -ood's test inputs against out, the ensemble's
// outputs on the evaluated split, warning where the AUROCs rest on few
// examples.
func detectOOD(ctx context.Context, o Options, r *experiment.Run, tasks []data.Task, out [][][]float64) (*experiment.OOD, error) {
	oodSet, err := r.OODSplit(ctx, o.OOD, o.DataDir, o.Limit)
	if err != nil {
		return nil, err
	}
	oodOut, _, err := r.Trainer.Outputs(ctx, oodSet)
	if err != nil {
		return nil, fmt.Errorf("-ood %s: %w", o.OOD, err)
	}
	res, err := experiment.DetectOOD(o.OOD, tasks, out, oodOut)
	if err != nil {
		return nil, fmt.Errorf("-ood %s: %w", o.OOD, err)
	}
	if w := res.Warning(); w != "" {
		log.Warn(w)
	}
	return &res, nil
}

// calibrate fills rep's temperatures and calibrated scores: the
// checkpoint's temperatures, or where it records none, those fitted now
// on the validation split (never the test split). Without a validation
// split of experiment.MinCalibrationExamples it leaves them out.
func calibrate(ctx context.Context, r *experiment.Run, tasks []data.Task, out [][][]float64, labels [][]float64, rep *Report) error {
	if !slices.ContainsFunc(tasks, func(t data.Task) bool { return t.Kind == data.Classification }) {
		return nil
	}
	temps, source, err := r.TemperaturesOrFit(ctx)
	if err != nil {
		return err
	}
	if temps == nil {
		validSize := 0
		if r.ValidSet != nil {
			validSize = r.ValidSet.Len()
		}
		log.Info(experiment.NoTemperatures(validSize))
		return nil
	}
	if source != experiment.TemperatureSourceCheckpoint {
		log.WithField("temperatures", temps).Info("the checkpoint records no temperatures: " + source)
	}
	for _, w := range experiment.TemperatureWarnings(tasks, temps) {
		log.Warn(w)
	}
	cal, err := experiment.Calibrated(tasks, out, labels, temps)
	if err != nil {
		return err
	}
	rep.Temperatures, rep.TemperatureSource, rep.Calibrated = temps, source, cal
	return nil
}

// temperatureFootnote says in words where a report's temperatures come
// from.
func temperatureFootnote(source string) string {
	if source == experiment.TemperatureSourceCheckpoint {
		return "temperatures from the checkpoint"
	}
	return "temperatures " + source + " now: the checkpoint records none"
}

// divergence says which parameters or scores are not finite, wrapping
// experiment.ErrDiverged (status 6), or returns nil when all are. run
// returns it after the report is written.
func divergence(ps []*engine.Particle, scores []engine.TaskScores) error {
	var what []string
	for i, p := range ps {
		vecs := append([][]float64{p.Trunk, p.Stats}, p.Heads...)
		for _, v := range vecs {
			if slices.ContainsFunc(v, nonFinite) {
				what = append(what, fmt.Sprintf("particle %d's parameters", i))
				break
			}
		}
	}
	for _, t := range scores {
		if !finiteScore(t.Ensemble) {
			what = append(what, fmt.Sprintf("task %s's ensemble scores", t.Task))
		}
	}
	if len(what) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s are not finite (NaN or Inf); retrain with a lower -lr or -kernel-scale", experiment.ErrDiverged, strings.Join(what, ", "))
}

func nonFinite(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

func finiteScore(s metrics.Score) bool {
	if c := s.Classification; c != nil && slices.ContainsFunc([]float64{c.Accuracy, c.Brier, c.ECE, c.NLL, c.Confidence}, nonFinite) {
		return false
	}
	return s.Regression == nil || !nonFinite(s.Regression.MSE)
}

// nullNonFinite is rep as JSON can encode it: every score as a map from
// its JSON name to its value, nil (null) where the value is not finite,
// which encoding/json refuses.
func nullNonFinite(rep Report) any {
	type task struct {
		Task      string           `json:"task"`
		Ensemble  map[string]any   `json:"ensemble"`
		Particles []map[string]any `json:"particles"`
	}
	out := struct {
		Report
		Tasks []task `json:"tasks"`
	}{Report: rep}
	for _, t := range rep.Tasks {
		nt := task{Task: t.Task, Ensemble: scoreMap(t.Ensemble)}
		for _, p := range t.Particles {
			nt.Particles = append(nt.Particles, scoreMap(p))
		}
		out.Tasks = append(out.Tasks, nt)
	}
	return out
}

// scoreMap lists a score's float fields under their JSON names.
func scoreMap(s metrics.Score) map[string]any {
	m := map[string]any{}
	for _, part := range []any{s.Classification, s.Regression} {
		v := reflect.ValueOf(part)
		if v.IsNil() {
			continue
		}
		v = v.Elem()
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || f.Type.Kind() != reflect.Float64 {
				continue
			}
			if x := v.Field(i).Float(); !nonFinite(x) {
				m[name] = x
			} else {
				m[name] = nil
			}
		}
	}
	return m
}

// writeTable prints the report for a person: one row per task.
func writeTable(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "%s: %s, method %s, epoch %d (step %d); %s split, %d examples\n\n",
		rep.Checkpoint, rep.Dataset, rep.Method, rep.Epoch, rep.Step, rep.Split, rep.Examples)
	// One table per kind of task, each with its own columns: a mixed
	// run's regression tasks are not listed under accuracy headers.
	if err := writeScores(w, rep, false); err != nil {
		return err
	}
	regressions := 0
	for _, t := range rep.Tasks {
		if t.Ensemble.Regression != nil {
			regressions++
		}
	}
	if regressions > 0 && regressions < len(rep.Tasks) {
		fmt.Fprintln(w) // between the two tables
	}
	if err := writeScores(w, rep, true); err != nil {
		return err
	}
	if rep.Calibrated != nil {
		fmt.Fprintf(w, "\nT=: the ensemble after temperature scaling (%s)\n", temperatureFootnote(rep.TemperatureSource))
	}
	if o := rep.OOD; o != nil {
		fmt.Fprintf(w, "\nout of distribution: %s test split (%d examples) against this %s split (%d)\n", o.Dataset, o.OutExamples, rep.Split, o.InExamples)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "AUROC of\tentropy\tmutual information")
		fmt.Fprintf(tw, "all tasks (sum)\t%.4f\t%.4f\n", o.Entropy, o.MutualInformation)
		for _, t := range o.Tasks {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\n", t.Task, t.Entropy, t.MutualInformation)
		}
		return tw.Flush()
	}
	return nil
}

// writeScores writes the table of rep's regression tasks (MSE per
// particle and of the ensemble's mean), or of its classification tasks
// (accuracy per particle, then the ensemble's scores, and at T where it
// was temperature-scaled); nothing when it has none of them.
func writeScores(w io.Writer, rep Report, regression bool) error {
	var tasks []int
	for j, t := range rep.Tasks {
		if (t.Ensemble.Regression != nil) == regression {
			tasks = append(tasks, j)
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"task"}
	for i := range rep.Tasks[0].Particles {
		if regression {
			head = append(head, fmt.Sprintf("p%d MSE", i))
		} else {
			head = append(head, fmt.Sprintf("p%d acc", i))
		}
	}
	if regression {
		head = append(head, "ensemble MSE")
	} else {
		head = append(head, "ensemble acc", "Brier", "ECE", "NLL", "conf-acc")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, j := range tasks {
		t := rep.Tasks[j]
		row := []string{t.Task}
		if regression {
			for _, p := range t.Particles {
				row = append(row, fmt.Sprintf("%.4f", p.MSE))
			}
			row = append(row, fmt.Sprintf("%.4f", t.Ensemble.MSE))
			fmt.Fprintln(tw, strings.Join(row, "\t"))
			continue
		}
		for _, p := range t.Particles {
			row = append(row, fmt.Sprintf("%.4f", p.Accuracy))
		}
		fmt.Fprintln(tw, strings.Join(append(row, classRow(t.Ensemble)...), "\t"))
		if rep.Calibrated != nil && rep.Calibrated[j].Classification != nil {
			row := []string{fmt.Sprintf("  T=%.3f", rep.Temperatures[j])}
			for range t.Particles {
				row = append(row, "")
			}
			fmt.Fprintln(tw, strings.Join(append(row, classRow(rep.Calibrated[j])...), "\t"))
		}
	}
	return tw.Flush()
}

// classRow is a classification score's columns of the table.
func classRow(e metrics.Score) []string {
	return []string{fmt.Sprintf("%.4f", e.Accuracy), fmt.Sprintf("%.4f", e.Brier), fmt.Sprintf("%.4f", e.ECE), fmt.Sprintf("%.4f", e.NLL),
		fmt.Sprintf("%+.4f", e.Confidence-e.Accuracy)}
}

// writeDiagrams writes one reliability diagram per classification task.
func writeDiagrams(dir string, rep Report) (err error) {
	created := cli.FirstMissing(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-reliability %s: %w", dir, err)
	}
	var written []string
	defer func() {
		if err == nil {
			return
		}
		// All or nothing: what this call wrote goes, and so does the
		// directory it made.
		for _, path := range written {
			os.Remove(path)
		}
		if created != "" {
			os.RemoveAll(created)
		}
	}()
	for _, t := range rep.Tasks {
		if t.Ensemble.Classification == nil {
			continue
		}
		path := filepath.Join(dir, "reliability-"+t.Task+".png")
		title := fmt.Sprintf("%s, %s, epoch %d: %s (ECE %.4f)", rep.Dataset, rep.Split, rep.Epoch, t.Task, t.Ensemble.ECE)
		if err := writeFile(path, 0o644, func(w io.Writer) error { return plotReliability(w, t.Ensemble.Classification, title) }); err != nil {
			return fmt.Errorf("-reliability %s: %w", dir, err)
		}
		written = append(written, path)
	}
	for _, path := range written {
		log.WithField("file", path).Info("wrote reliability diagram")
	}
	return nil
}

// writeFile writes a diagram whole or not at all (a variable, so that a
// test can make it fail as a full disk would).
var writeFile = atomicfile.Write

// checkReliability checks -reliability DIR before anything is computed:
// DIR, or the nearest directory above it that exists, must be a
// directory this process can write in.
func checkReliability(dir string) error {
	if dir == "" {
		return nil
	}
	at := filepath.Clean(dir)
	if m := cli.FirstMissing(at); m != "" {
		at = filepath.Dir(m)
	}
	st, err := os.Stat(at)
	if err != nil {
		return cli.Usage(fmt.Errorf("-reliability %s: %w", dir, err))
	}
	if !st.IsDir() {
		return cli.Usage(fmt.Errorf("-reliability %s: %s is not a directory", dir, at))
	}
	f, err := os.CreateTemp(at, ".eval-")
	if err != nil {
		return cli.Usage(fmt.Errorf("-reliability %s: cannot write in %s: %w", dir, at, err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
