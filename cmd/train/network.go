package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	log "github.com/sirupsen/logrus"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/multimnist"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/metrics"
	"github.com/mtsgd/mtsgd/models/lenet"
	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/network"
)

// runNetwork handles the data sets that train networks.
func runNetwork(ctx context.Context, o Options, trunkRule particles.Rule) error {
	train, test, err := loadData(o)
	if err != nil {
		return err
	}
	switch {
	case o.Stats:
		for _, d := range []data.Dataset{train, test} {
			if err := writeStats(os.Stdout, d); err != nil {
				return err
			}
		}
		return nil
	case o.Preview != "":
		err := atomicfile.Write(o.Preview, 0o644, func(w io.Writer) error { return writePreview(w, train, 16, o.Seed) })
		if err != nil {
			return err
		}
		log.WithField("file", o.Preview).Info("wrote preview")
		return nil
	}
	if o.TrainLimit > 0 {
		train = data.Limit(train, o.TrainLimit)
	}
	if o.TestLimit > 0 {
		test = data.Limit(test, o.TestLimit)
	}
	return trainNetwork(ctx, o, trunkRule, train, test)
}

// loadData reads or builds the training and test sets of o.Dataset.
func loadData(o Options) (train, test data.Dataset, err error) {
	dir, err := data.Dir(o.DataDir)
	if err != nil {
		return nil, nil, err
	}
	v, ok := multimnist.Lookup(o.Dataset)
	if !ok {
		return nil, nil, fmt.Errorf("-dataset %q is not a network data set", o.Dataset)
	}
	start := time.Now()
	tr, te, err := v.Load(dir, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	log.WithFields(log.Fields{"train": tr.Len(), "test": te.Len(), "seconds": fmt.Sprintf("%.1f", time.Since(start).Seconds())}).
		Info("built " + o.Dataset)
	return tr, te, nil
}

// metricsLine is one line of DIR/metrics.jsonl: one task's test scores
// after one epoch.
type metricsLine struct {
	Epoch   int     `json:"epoch"`
	Step    int     `json:"step"`
	Task    string  `json:"task"`
	LR      float64 `json:"lr"`
	Loss    float64 `json:"train_loss"` // mean over the epoch and the particles
	Seconds float64 `json:"seconds"`    // since the start of training
	metrics.Score
	Particles []metrics.Score `json:"particles"`
}

// trainNetwork trains LeNet particles on train, scoring them on test after
// every epoch.
func trainNetwork(ctx context.Context, o Options, trunkRule particles.Rule, train, test data.Dataset) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("creating output directory: %w", err)
	}
	headRule, err := particles.New("svgd", particles.Config{
		Kernel:    particles.RBF{Scale: o.KernelScale},
		Repulsion: o.HeadRepulsion,
	})
	if err != nil {
		return err
	}
	schedule, err := o.schedule()
	if err != nil {
		return err
	}
	tasks := train.Tasks()
	classes := make([]int, len(tasks))
	for j, t := range tasks {
		classes[j] = t.Classes
	}
	dtype := tensor.Float32
	if o.Dtype == "float64" {
		dtype = tensor.Float64
	}
	cfg := &network.Config{Model: lenet.New(classes...), Tasks: tasks, Batch: o.Batch, Dtype: dtype}
	ens, err := network.NewEnsemble(cfg, o.Particles, o.Seed, o.newOptimizer, o.Workers)
	if err != nil {
		return err
	}
	log.WithFields(log.Fields{
		"dataset": o.Dataset, "method": o.Method + " (heads: svgd)", "particles": o.Particles,
		"epochs": o.Epochs, "batch": o.Batch, "train": train.Len(), "test": test.Len(),
		"lr": o.LR, "optimizer": o.Optimizer, "warmup": o.Warmup, "seed": o.Seed,
	}).Info("training")

	var lines []metricsLine
	start := time.Now()
	for epoch := range o.Epochs {
		lr := schedule.LR(epoch)
		ens.SetLR(lr)
		u := network.Update{Trunk: trunkRule, Head: headRule, Warmup: epoch < o.Warmup}
		meanLoss, err := trainEpoch(ctx, o, ens, train, epoch, u)
		if err != nil {
			return err
		}
		scores, err := ens.Evaluate(ctx, test)
		if err != nil {
			return fmt.Errorf("epoch %d: evaluating on %s: %w", epoch+1, test.Name(), err)
		}
		for j, s := range scores {
			line := metricsLine{
				Epoch: epoch + 1, Step: ens.Steps, Task: s.Task, LR: lr, Loss: meanLoss[j],
				Seconds: time.Since(start).Seconds(), Score: s.Ensemble, Particles: s.Particles,
			}
			lines = append(lines, line)
			log.WithFields(scoreFields(s.Ensemble)).WithFields(log.Fields{"epoch": epoch + 1, "task": s.Task, "train_loss": fmt.Sprintf("%.4f", meanLoss[j])}).
				Info("ensemble on " + test.Name())
		}
		path := filepath.Join(o.Out, "metrics.jsonl")
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return writeJSONL(w, lines) }); err != nil {
			return err
		}
		if epoch == o.Epochs-1 {
			for _, s := range scores {
				for i, p := range s.Particles {
					log.WithFields(scoreFields(p)).WithFields(log.Fields{"task": s.Task, "particle": i}).Info("particle on " + test.Name())
				}
			}
		}
	}
	log.WithFields(log.Fields{"seconds": fmt.Sprintf("%.0f", time.Since(start).Seconds()), "metrics": filepath.Join(o.Out, "metrics.jsonl")}).Info("done")
	return nil
}

// trainEpoch runs one epoch of steps and returns each task's loss averaged
// over the epoch's steps and the particles.
func trainEpoch(ctx context.Context, o Options, ens *network.Ensemble, train data.Dataset, epoch int, u network.Update) ([]float64, error) {
	batches := data.Epoch(train, o.Batch, true, o.Seed, epoch)
	bar := newProgress(o.Progress, fmt.Sprintf("epoch %d/%d", epoch+1, o.Epochs), batches.Len())
	defer bar.finish()
	k := len(train.Tasks())
	sum := make([]float64, k)
	parts := make([]string, k)
	steps := 0
	for batches.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		losses, err := ens.Step(batches.Batch(), u)
		if err != nil {
			return nil, fmt.Errorf("epoch %d: %w", epoch+1, err)
		}
		steps++
		for j, l := range losses {
			for _, v := range l {
				sum[j] += v / float64(len(l))
			}
		}
		for j, t := range train.Tasks() {
			parts[j] = fmt.Sprintf("%s %.4f", t.Name, sum[j]/float64(steps))
		}
		bar.step(steps, "loss "+strings.Join(parts, ", "))
	}
	if err := batches.Err(); err != nil {
		return nil, err
	}
	for j := range sum {
		sum[j] /= float64(max(1, steps))
	}
	return sum, nil
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

func writeJSONL(w io.Writer, lines []metricsLine) error {
	enc := json.NewEncoder(w)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}
