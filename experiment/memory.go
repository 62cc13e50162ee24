package experiment

import (
	"fmt"

	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/particles"
)

// checkMemory refuses a run whose least memory, estimated before anything
// of it is allocated, exceeds the machine's (package sysmem): asked for
// too much, Go dies with a fatal out-of-memory error that says nothing of
// the flag behind it. evalExamples is the size of the largest set the run
// evaluates, workers the graphs run at once.
func (s Settings) checkMemory(cfg *engine.Config, evalExamples, workers int) error {
	parts, err := s.memory(cfg, evalExamples, workers)
	if err != nil {
		return err
	}
	return sysmem.Check(parts)
}

// memory is a lower bound on the memory a run holds at once, by part:
// every particle's float64 vectors (parameters, head scores, update
// directions, optimiser state, batch statistics), one trunk score per
// task (float32 or float64, engine.Config.ScoreSize) and, for a
// heads-first step, its trunk's forward pass (engine.KeptBytes), what
// the update rules keep (the kernel matrices), the workers' graphs, their
// particles' stacked passes (engine.AcrossBytes) and the batch, and the
// evaluation's predictions (every particle's, for every
// example of a set).
func (s Settings) memory(cfg *engine.Config, evalExamples, workers int) ([]sysmem.Part, error) {
	m := cfg.Model
	trunk, stats := float64(models.Size(m.TrunkParams())), float64(models.Size(m.TrunkStats()))
	heads, outputs := 0.0, 0.0
	for j, t := range cfg.Tasks {
		n := models.Size(m.HeadParams(j))
		heads += float64(n)
		outputs += float64(max(1, t.Classes))
	}
	k, particleCount := float64(len(cfg.Tasks)), float64(s.Particles)
	optStates := 0.0 // vectors per parameter vector
	switch {
	case s.Optimizer == "adam":
		optStates = 2
	case s.Momentum != 0:
		optStates = 1
	}
	perParticle := 8*(trunk+heads+stats) + // parameters
		float64(cfg.ScoreSize())*k*trunk + 8*heads + // scores
		8*(trunk+heads) + // directions
		8*(optStates*(trunk+heads)+stats) // optimiser states, batch statistics
	var rules float64
	if method, err := LookupMethod(s.Method); err == nil && method.Kernels {
		rules = 2 * particles.KernelMemory(s.Particles) // the trunks' and the heads' rules
	}

	f, err := engine.GraphFootprint(cfg)
	if err != nil {
		return nil, err
	}
	input := 1.0
	for _, d := range m.InputShape() {
		input *= float64(d)
	}
	batch := float64(cfg.Batch)
	workers = min(max(1, workers), s.Particles) // as engine.New
	graphs := float64(workers)*f.Bytes(cfg.Batch) +
		batch*input*4 + batch*(input+outputs+1)*float64(cfg.Dtype.Size()) // the batch as read, and as the graphs read it

	headsFirst := s.Order == "heads-first"
	if headsFirst {
		kept, err := engine.KeptBytes(cfg)
		if err != nil {
			return nil, err
		}
		perParticle += kept // the trunk's forward pass, kept for the step's second evaluation
	}
	across, err := engine.AcrossBytes(cfg, s.Particles, workers, headsFirst)
	if err != nil {
		return nil, err
	}
	graphs += float64(workers) * across // each worker's particles' passes, stacked

	particleSetting := fmt.Sprintf("-particles %d", s.Particles)
	return []sysmem.Part{
		{What: "particle vectors", Setting: particleSetting, Bytes: particleCount * perParticle},
		{What: "kernel matrices", Setting: particleSetting, Bytes: rules},
		{What: fmt.Sprintf("graphs of %d workers", workers), Setting: fmt.Sprintf("-batch %d", cfg.Batch), Bytes: graphs},
		{What: "evaluation", Setting: particleSetting, Bytes: 8 * float64(evalExamples) * (outputs*(particleCount+1) + k)},
	}, nil
}
