package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/cmd/internal/progress"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	"github.com/mtsgd/mtsgd/internal/openblas"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/metrics"
	"github.com/mtsgd/mtsgd/particles"
)

// runFiles are what a network run keeps in its directory: one of them
// there means the directory holds a run. curves.png, drawn from
// metrics.jsonl, is not one, but -overwrite deletes it with them.
var runFiles = []string{"last", "best", experiment.MetricsFile}

// runNetwork handles the data sets that train networks.
func runNetwork(ctx context.Context, o Options) (err error) {
	trains := !o.Stats && o.Preview == ""
	if trains {
		// Before the data loads (seconds to minutes), so that a locked
		// or refused -out fails at once. A run refused before it wrote
		// anything leaves no -out holding the lock file alone.
		var unlock func(error)
		if unlock, err = cli.LockNewRun(o.Out); err != nil {
			return err
		}
		// err is the named result here: what runNetwork returns.
		defer func() { unlock(err) }()
		if err := checkFresh(o); err != nil {
			return err
		}
	}
	// Before the data loads too: a missing GPU fails at once.
	dev, err := openDevice(o.Device)
	if err != nil {
		return err
	}
	if dev != nil {
		defer dev.Close()
	}
	var d experiment.Data
	err = interruptible(ctx, func() (err error) { d, err = loadData(o.Settings, o.DataDir); return err })
	if errors.As(err, new(*data.SettingError)) {
		return cli.Usage(err) // a flag asks for more than the data holds
	}
	if err != nil {
		return err
	}
	if !trains {
		return inspect(o, d)
	}
	r, err := experiment.NewWith(o.Settings, d, experiment.Components{Device: dev}, o.Workers)
	if errors.Is(err, sysmem.ErrTooBig) {
		return cli.Usage(err) // the flags ask for more than the machine has
	}
	if err != nil {
		return err
	}
	if o.Overwrite {
		// Now rather than as the new run saves, so that the directory
		// never mixes the two runs' files.
		for _, name := range append(runFiles, curves.FileName) {
			if err := os.RemoveAll(filepath.Join(o.Out, name)); err != nil {
				return fmt.Errorf("-overwrite: %w", err)
			}
		}
	}
	logStart(o, r)
	return trainNetwork(ctx, o, r)
}

// inspect writes what -stats or -preview asks of the data: each split's
// statistics to standard output, or a grid of 16 training inputs to the
// -preview file.
func inspect(o Options, d experiment.Data) error {
	if o.Stats {
		for _, set := range []data.Dataset{d.Train, d.Valid, d.Test} {
			if set == nil {
				continue
			}
			if err := writeStats(os.Stdout, set); err != nil {
				return err
			}
		}
		return nil
	}
	err := atomicfile.Write(o.Preview, 0o644, func(w io.Writer) error { return writePreview(w, d.Train, 16, o.Seed) })
	if err != nil {
		return err
	}
	log.WithField("file", o.Preview).Info("wrote preview")
	return nil
}

// logStart logs the settings a new run trains with, and the presets'
// where its method has them.
func logStart(o Options, r *experiment.Run) {
	s := r.Settings
	f := log.Fields{
		"dataset": s.Dataset, "method": s.Method, "particles": s.Particles,
		"epochs": s.Epochs, "batch": s.Batch, "train": r.TrainSet.Len(), "test": r.TestSet.Len(), "model": s.Model,
		"lr": s.LR, "optimizer": s.Optimizer, "seed": s.Seed, "out": o.Out, "device": o.Device, "dtype": s.Dtype,
		"blas": openblas.Name(),
	}
	if r.ValidSet != nil {
		f["valid"] = r.ValidSet.Len()
	}
	if m, err := experiment.LookupMethod(s.Method); err == nil && m.Presets {
		f["preset"], f["score_scale"], f["u_terms"], f["warmup"] = s.Preset, s.ScoreScale, s.UTerms, s.Warmup
		f["kernel_on"], f["order"] = s.KernelOn, s.Order
		f["repulsion"], f["head_repulsion"] = s.Repulsion, s.HeadRepulsion
	}
	log.WithFields(f).Info("training")
}

// resumeNetwork continues the run in o.Resume from its last checkpoint.
func resumeNetwork(ctx context.Context, o Options) error {
	if err := o.checkRunning(); err != nil {
		return err
	}
	release, err := cli.LockRun(o.Resume, false)
	if err != nil {
		return err
	}
	defer release()
	dev, err := openDevice(o.Device)
	if err != nil {
		return err
	}
	if dev != nil {
		defer dev.Close()
	}
	var (
		r   *experiment.Run
		dir string
	)
	err = interruptible(ctx, func() (err error) {
		r, dir, err = experiment.OpenFiles(filepath.Join(o.Resume, "last"), o.DataDir, o.Data, experiment.Components{Device: dev}, o.Workers)
		return err
	})
	// Whether last/ is the run's is judged once it has loaded, so that
	// a damaged one is reported as such; where it did not load, a last/
	// of another run is said too.
	if err != nil {
		if !errors.Is(err, errLoadInterrupted) {
			if other := checkOwnLast(o.Resume); other != nil {
				return errors.Join(err, other)
			}
		}
		return err
	}
	if err := checkOwnLast(o.Resume); err != nil {
		r.Close()
		return err
	}
	if f := r.Settings.Files; f != nil && f.SHA256 == nil {
		log.WithField("checkpoint", dir).Warn("the checkpoint records no hashes of its data files (it predates them): a change of their content is not detected")
	}
	if o.Epochs > 0 && o.Epochs < r.Epoch() {
		r.Close()
		return cli.Usage(fmt.Errorf("-epochs %d with -resume: %s has done %d epochs already; -epochs N with N above that extends it", o.Epochs, o.Resume, r.Epoch()))
	}
	if o.Epochs > 0 {
		r.Settings.Epochs = o.Epochs
	}
	log.WithFields(log.Fields{"checkpoint": dir, "epoch": r.Epoch(), "step": r.Trainer.Steps, "epochs": r.Settings.Epochs}).Info("resuming")
	return trainNetwork(ctx, o, r)
}

// checkOwnLast refuses a run directory whose last/ is not the run's own
// (experiment.CheckSameRun), judged by its best/. Without a best/ (a run
// interrupted in its first epoch) there is nothing to judge by; a best/
// that cannot be read is said, and the resume goes on: last/ is what it
// reads.
func checkOwnLast(runDir string) error {
	last, best := filepath.Join(runDir, "last"), filepath.Join(runDir, "best")
	if _, err := os.Stat(filepath.Join(last, checkpoints.ManifestName)); err != nil {
		return nil // OpenFiles says what is wrong with last/
	}
	if _, err := os.Lstat(best); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	err := experiment.CheckSameRun(last, best)
	switch {
	case errors.Is(err, experiment.ErrOtherRun):
		return fmt.Errorf("-resume %s: %w", runDir, err)
	case err != nil:
		log.WithField("best", best).Warnf("cannot check that last/ is this run's: %v", err)
	}
	return nil
}

// errLoadInterrupted is interruptible's error when the context ends
// first: an interruption (status 3) with nothing saved to resume.
var errLoadInterrupted = cli.Marked("interrupted while the data loaded, before training began: nothing was written", context.Canceled)

// interruptible runs load, but returns errLoadInterrupted as soon as ctx
// ends: loading CelebA's images takes minutes, and a signal must not wait
// for it (the process exits, abandoning the load).
func interruptible(ctx context.Context, load func() error) error {
	done := make(chan error, 1)
	go func() { done <- load() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errLoadInterrupted
	}
}

// openDevice opens the GPU that -device cuda asks for; nil for cpu.
func openDevice(name string) (gpu.Device, error) {
	dev, err := cuda.OpenNamed(name)
	if errors.Is(err, cuda.ErrNotBuilt) {
		return nil, cli.Usage(err)
	}
	if err != nil {
		return nil, err
	}
	if dev != nil {
		log.WithField("device", dev.Name()).Info("GPU")
	}
	return dev, nil
}

// checkFresh refuses an o.Out that holds a run, unless o.Overwrite.
func checkFresh(o Options) error {
	if o.Overwrite {
		return nil
	}
	for _, name := range runFiles {
		_, err := os.Lstat(filepath.Join(o.Out, name))
		switch {
		case err == nil:
			return fmt.Errorf("-out %s holds a run (%s): continue it with train -resume %s, or give another -out (or -overwrite to replace it)",
				o.Out, name, o.Out)
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("-out: %w", err)
		}
	}
	return nil
}

// loadData builds the data sets of s, logging how long it took.
func loadData(s experiment.Settings, dataDir string) (experiment.Data, error) {
	d, took, err := experiment.LoadData(s, dataDir)
	if err != nil {
		return d, err
	}
	f := log.Fields{"train": d.Train.Len(), "test": d.Test.Len(), "seconds": fmt.Sprintf("%.1f", took.Seconds())}
	if d.Valid != nil {
		f["valid"] = d.Valid.Len()
	}
	log.WithFields(f).Info("built " + s.Dataset)
	for _, n := range d.Notes {
		log.Info(n)
	}
	return d, nil
}

// trainNetwork runs r to its last epoch with progress and log lines.
func trainNetwork(ctx context.Context, o Options, r *experiment.Run) error {
	r.Out, r.SaveEvery = o.Out, saveEvery
	if !o.keepCheckpointEvery {
		r.CheckpointEvery = o.CheckpointEvery
	}
	if o.BestMetric != "" {
		r.Best = o.BestMetric
	}
	log.Info(r.Selection())
	if w := r.SelectionWarning(); w != "" {
		log.Warn(w)
	}
	var bar *progress.Bar
	var drawn time.Time // when curves.png was last drawn, and of which epoch
	drawnEpoch := -1
	parts := make([]string, len(r.TrainSet.Tasks()))
	r.Hooks = experiment.Hooks{
		EpochStart: func(epoch, batches, done int) {
			bar = progress.New(o.Progress, fmt.Sprintf("epoch %d/%d", epoch+1, r.Settings.Epochs), "it", batches)
			bar.Skip(done)
		},
		Step: func(_, batch int, loss []float64) {
			for j, t := range r.TrainSet.Tasks() {
				parts[j] = fmt.Sprintf("%s %.4f", t.Name, loss[j])
			}
			bar.Done(batch, "loss "+strings.Join(parts, ", "))
		},
		EpochEnd: func(epoch int, lines []experiment.MetricsLine) {
			bar.Finish()
			for _, l := range lines {
				log.WithFields(scoreFields(l.Score)).WithFields(log.Fields{"epoch": epoch + 1, "task": l.Task, "train_loss": fmt.Sprintf("%.4f", l.Loss)}).
					Info("ensemble on " + r.Settings.Dataset + "/" + l.Split)
			}
		},
		Metrics: func(history []experiment.MetricsLine) {
			// Drawing takes longer than a small data set's epoch: at
			// most every curvesEvery, and at the end.
			if time.Since(drawn) >= curvesEvery || r.Epoch() == r.Settings.Epochs {
				drawCurves(r.Out, history)
				drawn, drawnEpoch = time.Now(), r.Epoch()
			}
		},
	}
	if o.LogQP {
		r.Hooks.QP = func(step int, d particles.Diagnostics) {
			log.WithFields(log.Fields{
				"step": step, "K": len(d.Weights), "weights": fmt.Sprintf("%.4g", d.Weights),
				"gap": fmt.Sprintf("%.3g", d.QP.Gap), "iterations": d.QP.Iterations, "certified": d.QP.Converged,
			}).Info("qp")
		}
	}
	start := time.Now()
	err := r.Train(ctx)
	if bar != nil && err != nil {
		bar.Finish()
	}
	// Drawn with the writes of metrics.jsonl; again where the last
	// epochs were not drawn, or the file has gone.
	if _, serr := os.Lstat(filepath.Join(r.Out, curves.FileName)); (drawnEpoch != r.Epoch() || errors.Is(serr, os.ErrNotExist)) && len(r.History()) > 0 {
		drawCurves(r.Out, r.History())
	}
	if err != nil {
		return err
	}
	for _, l := range r.History() {
		if l.Epoch != r.Epoch() || l.Split != "test" {
			continue
		}
		for i, p := range l.Particles {
			log.WithFields(scoreFields(p)).WithFields(log.Fields{"task": l.Task, "particle": i}).Info("particle on " + r.TestSet.Name())
		}
	}
	log.WithFields(log.Fields{
		"seconds": fmt.Sprintf("%.0f", time.Since(start).Seconds()), "metrics": filepath.Join(o.Out, "metrics.jsonl"),
		"checkpoints": filepath.Join(o.Out, "{last,best}"),
	}).Info("done")
	return nil
}

// curvesEvery is the least time between two drawings of curves.png
// during a run; saveEvery between two saves of the checkpoints at an
// epoch's end (experiment.Run.SaveEvery): a small data set's epochs take
// less time than drawing or saving.
const (
	curvesEvery = 30 * time.Second
	saveEvery   = 10 * time.Second
)

// drawCurves draws curves.png, a view of metrics.jsonl: failing to draw
// it costs no training, so it is a warning.
func drawCurves(out string, history []experiment.MetricsLine) {
	if err := curves.WriteRun(filepath.Join(out, curves.FileName), history); err != nil {
		log.Warn(err)
	}
}

func scoreFields(s metrics.Score) log.Fields {
	if s.Regression != nil {
		return log.Fields{"mse": fmt.Sprintf("%.4f", s.MSE)}
	}
	return log.Fields{
		"accuracy": fmt.Sprintf("%.4f", s.Accuracy), "brier": fmt.Sprintf("%.4f", s.Brier),
		"ece": fmt.Sprintf("%.4f", s.ECE), "nll": fmt.Sprintf("%.4f", s.NLL), "confidence": fmt.Sprintf("%.4f", s.Confidence),
	}
}
