package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/progress"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/particles/toy"
)

// runToy moves particles on a toy problem and writes the CSV and the plot.
func runToy(ctx context.Context, o Options) error {
	problem, err := toy.Lookup(o.Dataset)
	if err != nil {
		return fmt.Errorf("-dataset: %w", err)
	}
	method, err := experiment.LookupMethod(o.Method)
	if err != nil {
		return fmt.Errorf("-%w", err)
	}
	if !method.Toy {
		return fmt.Errorf("-method %s does not move the points of toy problems", o.Method)
	}
	// The toy problems have no presets: their rules see the kernel
	// scale, the repulsion and the particles, the rule as published.
	rule, err := method.TrunkRule(experiment.RuleParams{
		Settings: experiment.Settings{KernelScale: o.KernelScale, Repulsion: o.Repulsion, Particles: o.Particles,
			Seed: o.Seed, Repel: o.Repel, MethodParams: o.MethodParams},
		Tasks: problem.Targets,
	})
	if err != nil {
		return err
	}
	release, err := cli.LockRun(o.Out, true)
	if err != nil {
		return err
	}
	defer release()
	log.WithFields(log.Fields{
		"dataset": o.Dataset, "method": o.Method, "particles": o.Particles,
		"steps": o.Steps, "lr": o.LR, "optimizer": o.Optimizer, "seed": o.Seed,
	}).Info("training")

	bar := progress.New(o.Progress, "steps", "it", o.Steps)
	start := time.Now()
	theta, err := toy.Run(ctx, toy.Config{
		Problem:   problem,
		Rule:      rule,
		Optimizer: o.NewOptimizer,
		Particles: o.Particles,
		Steps:     o.Steps,
		Seed:      o.Seed,
		OnStep:    func(n int) { bar.Done(n, "") },
	})
	bar.Finish()
	if err != nil {
		return err
	}
	log.WithField("seconds", time.Since(start).Seconds()).Info("done")
	logSummary(problem, theta)

	csvPath := filepath.Join(o.Out, "particles.csv")
	if err := atomicfile.Write(csvPath, 0o644, func(w io.Writer) error { return writeCSV(w, theta) }); err != nil {
		return err
	}
	pngPath := filepath.Join(o.Out, "particles.png")
	title := fmt.Sprintf("%s, %s, %d particles, %d steps, seed %d", o.Dataset, o.Method, o.Particles, o.Steps, o.Seed)
	if err := atomicfile.Write(pngPath, 0o644, func(w io.Writer) error { return plotParticles(w, problem, theta, title) }); err != nil {
		return err
	}
	log.WithFields(log.Fields{"csv": csvPath, "plot": pngPath}).Info("wrote")
	return nil
}

// logSummary logs the figures by which the paper compares methods.
func logSummary(p toy.Problem, theta [][]float64) {
	if p.Summary != nil {
		log.WithFields(p.Summary(theta)).Info(p.Name + " summary")
	}
}

// writeCSV writes the header particle,theta_0,…,theta_{d−1} and one row per
// particle, with values in the shortest form that reads back exactly.
func writeCSV(w io.Writer, theta [][]float64) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("particle")
	for j := range theta[0] {
		fmt.Fprintf(bw, ",theta_%d", j)
	}
	bw.WriteByte('\n')
	for i, th := range theta {
		bw.WriteString(strconv.Itoa(i))
		for _, v := range th {
			bw.WriteByte(',')
			bw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
