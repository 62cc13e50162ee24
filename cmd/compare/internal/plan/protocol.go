package plan

import (
	"fmt"
	"strconv"

	"github.com/mtsgd/mtsgd/data/celeba"
	"github.com/mtsgd/mtsgd/experiment"
)

// Protocol is a budget: epochs and seeds, or for a study the runs one by
// one; a protocol of one data set's paper table also fixes that data
// set, its tasks, and its tables.
type Protocol struct {
	Epochs int
	Seeds  string // as -seeds takes them
	Runs   []Run
	// Dataset, when set, is the one data set the protocol runs.
	Dataset string
	// Tasks replaces the data set's default -tasks ("": the default).
	Tasks string
	// Attributes: the per-attribute tables and radar charts
	// (Comparison.Attributes).
	Attributes bool
	// Assess: each finished run is assessed, as a study's (study.go).
	Assess bool
}

// Protocols are the budgets -protocol names.
var Protocols = map[string]Protocol{
	"reduced":      {Epochs: 5, Seeds: "1"},
	"paper":        {Epochs: 100, Seeds: "1,2,3"},
	"tuned":        {Epochs: Tuned.Epochs, Seeds: Tuned.Seeds},
	"paper-study":  {Epochs: 100, Runs: PaperStudy, Assess: true},
	"paper-celeba": PaperCelebA,
}

// PaperCelebA is the paper's CelebA comparison (its appendix, "Experiment
// on CelebA Dataset"): all 40 attributes on the whole official training
// split (compare's -train-limit 0), 64×64 images, the paper's ResNet-18
// (CelebA's default model, resnet18-cifar), Adam at 5e-4, batch 64, 100
// epochs (CelebA's defaults), 5 particles (compare's default -particles),
// against uniform scaling (linear), single-task training, uncertainty
// weighting (uw), GradNorm (gradnorm) and MGDA (mgda). The paper ran
// MGDA's code with five seeds and quotes the other baselines from Chen et
// al.'s GradNorm, one figure each, and does not say how many MT-SGD runs
// its figures average: here seed 1 of every method, then MGDA's seeds
// 2-5. The single-task baseline is one run per attribute, method single
// on that attribute alone (-tasks NAME): the network of one task, whose
// step takes one backward pass of the trunk where a 40-task run takes
// 40. The runs of every attribute together make single's rows.
var PaperCelebA = Protocol{
	Epochs:     100,
	Dataset:    celeba.Name,
	Tasks:      strconv.Itoa(len(celeba.Attributes)),
	Runs:       paperCelebARuns(),
	Attributes: true,
}

// paperCelebARuns are PaperCelebA's runs: seed 1 of each method, MGDA's
// seeds 2-5, then the single-task runs, one per attribute.
func paperCelebARuns() []Run {
	runs := []Run{{"mtsgd", 1, ""}, {"linear", 1, ""}, {"uw", 1, ""}, {"gradnorm", 1, ""}, {"mgda", 1, ""},
		{"mgda", 2, ""}, {"mgda", 3, ""}, {"mgda", 4, ""}, {"mgda", 5, ""}}
	for _, a := range celeba.Attributes {
		runs = append(runs, Run{"single", 1, a})
	}
	return runs
}

// RunsFor are the protocol's runs that a run on dataset can train, and
// why each method left out is (one that cannot take the data set's
// tasks: linear-pref on more than two).
func (p Protocol) RunsFor(dataset string) (runs []Run, left []string) {
	s := experiment.Defaults(dataset)
	refused := map[string]bool{}
	for _, r := range p.Runs {
		spec, err := parseSpec(r.Method)
		if err == nil {
			err = s.CheckFits(spec.Name)
		}
		if err != nil {
			if !refused[r.Method] {
				left = append(left, fmt.Sprintf("%s left out: %v", r.Method, err))
			}
			refused[r.Method] = true
			continue
		}
		runs = append(runs, r)
	}
	return runs, left
}
