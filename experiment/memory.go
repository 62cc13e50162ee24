package experiment

import (
	"fmt"

	"github.com/mtsgd/mtsgd/data/files"
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
//
// The parts that follow from the shapes alone (the particles' vectors,
// the kernel matrices, the evaluation, the graphs' parameters and
// gradients) are checked first: measuring the graphs allocates their
// parameters, which an absurd size (a task of 2e9 classes) would not
// survive.
func (s Settings) checkMemory(cfg *engine.Config, evalExamples, workers int) error {
	if err := sysmem.Check(s.shapeMemory(cfg, evalExamples, workers).parts()); err != nil {
		return err
	}
	parts, err := s.memory(cfg, evalExamples, workers)
	if err != nil {
		return err
	}
	return sysmem.Check(parts)
}

// shapeParts are the parts of the memory estimate that the shapes of
// the parameters and outputs give without building a graph.
type shapeParts struct {
	particles, rules, graphs, evaluation float64
	particleSetting, classesSetting      string // the settings behind the particles' and the outputs' parts
	lower                                string // what the message says to lower ("": the setting's flag)
	workers                              int
}

// parts lists them as sysmem parts, graphs counting only their
// parameters and gradients.
func (p shapeParts) parts() []sysmem.Part {
	return []sysmem.Part{
		{What: "particle vectors", Setting: p.classesSetting, Lower: p.lower, Bytes: p.particles},
		{What: "kernel matrices", Setting: p.particleSetting, Bytes: p.rules},
		{What: fmt.Sprintf("parameters and gradients of %d workers' graphs", p.workers), Setting: p.classesSetting, Lower: p.lower, Bytes: p.graphs},
		{What: "evaluation", Setting: p.classesSetting, Lower: p.lower, Bytes: p.evaluation},
	}
}

// shapeMemory computes the shape parts. Where the heads outweigh the
// trunk on a data set of your own files, the task with the most classes
// is named with the particles: its "classes" in tasks.json is likely
// what makes the run too big.
func (s Settings) shapeMemory(cfg *engine.Config, evalExamples, workers int) shapeParts {
	m := cfg.Model
	trunk, stats := float64(models.Size(m.TrunkParams())), float64(models.Size(m.TrunkStats()))
	heads, outputs := 0.0, 0.0
	widest := -1
	for j, t := range cfg.Tasks {
		n := models.Size(m.HeadParams(j))
		heads += float64(n)
		outputs += float64(max(1, t.Classes))
		if widest < 0 || t.Classes > cfg.Tasks[widest].Classes {
			widest = j
		}
	}
	k, particleCount := float64(len(cfg.Tasks)), float64(s.Particles)
	optStates := 0.0 // vectors per parameter vector
	switch {
	case s.Optimizer == OptimizerAdam:
		optStates = 2
	case s.Momentum != 0:
		optStates = 1
	}
	perParticle := 8*(trunk+heads+stats) + // parameters
		float64(cfg.ScoreSize())*k*trunk + 8*heads + // scores
		8*(trunk+heads) + // directions
		8*(optStates*(trunk+heads)+stats) // optimiser states, batch statistics
	p := shapeParts{particles: particleCount * perParticle, particleSetting: fmt.Sprintf("-particles %d", s.Particles),
		evaluation: 8 * float64(evalExamples) * (outputs*(particleCount+1) + k)}
	p.classesSetting = p.particleSetting
	if widest >= 0 && heads > trunk && s.Dataset == files.Name {
		t := cfg.Tasks[widest]
		p.classesSetting = fmt.Sprintf("%s: classes %d (task %s) with %s", files.TasksFile, t.Classes, t.Name, p.particleSetting)
		p.lower = fmt.Sprintf("classes in %s, or -particles", files.TasksFile)
	}
	method, err := LookupMethod(s.Method)
	if err == nil && method.Kernels {
		p.rules = 2 * particles.KernelMemory(s.Particles) // the trunks' and the heads' rules
	}
	if err == nil && method.shared(s) {
		if rule, err := method.Trunk(RuleParams{Settings: s, Tasks: len(cfg.Tasks)}); err == nil {
			if _, ok := rule.(*particles.Aggregated); ok {
				p.rules += 8 * (k + 1) * trunk // one particle's task gradients and direction at a time
			}
		}
	}
	if s.Repel {
		p.rules += particles.KernelMemory(s.Particles) + 8*particleCount*trunk // the kernel, the repelled directions
	}
	p.workers = min(max(1, workers), s.Particles) // as engine.New
	p.graphs = float64(p.workers) * 2 * (trunk + heads) * float64(cfg.Dtype.Size())
	return p
}

// memory is a lower bound on the memory a run holds at once, by part:
// every particle's float64 vectors (parameters, head scores, update
// directions, optimiser state, batch statistics), one trunk score per
// task (float32 or float64, engine.Config.ScoreSize) and, for a
// heads-first step, its trunk's forward pass (engine.KeptBytes), what
// the update rules keep (the kernel matrices, an aggregator's task
// gradients), the workers' graphs, their
// particles' stacked passes (engine.AcrossBytes) and the batch, and the
// evaluation's predictions (every particle's, for every
// example of a set).
func (s Settings) memory(cfg *engine.Config, evalExamples, workers int) ([]sysmem.Part, error) {
	p := s.shapeMemory(cfg, evalExamples, workers)
	m := cfg.Model
	outputs := 0.0
	for _, t := range cfg.Tasks {
		outputs += float64(max(1, t.Classes))
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
	workers = p.workers
	graphs := float64(workers)*f.Bytes(cfg.Batch) +
		batch*input*4 + batch*(input+outputs+1)*float64(cfg.Dtype.Size()) // the batch as read, and as the graphs read it

	headsFirst := s.Order.HeadsFirst()
	if headsFirst {
		kept, err := engine.KeptBytes(cfg)
		if err != nil {
			return nil, err
		}
		p.particles += float64(s.Particles) * kept // the trunk's forward pass, kept for the step's second evaluation
	}
	across, err := engine.AcrossBytes(cfg, s.Particles, workers, headsFirst)
	if err != nil {
		return nil, err
	}
	graphs += float64(workers) * across // each worker's particles' passes, stacked

	return []sysmem.Part{
		{What: "particle vectors", Setting: p.classesSetting, Lower: p.lower, Bytes: p.particles},
		{What: "kernel matrices", Setting: p.particleSetting, Bytes: p.rules},
		{What: fmt.Sprintf("graphs of %d workers", workers), Setting: fmt.Sprintf("-batch %d", s.Batch), Bytes: graphs},
		{What: "evaluation", Setting: p.classesSetting, Lower: p.lower, Bytes: p.evaluation},
	}, nil
}
