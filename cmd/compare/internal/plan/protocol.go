package plan

import (
	"fmt"

	"github.com/mtsgd/mtsgd/experiment"
)

// Protocol is a budget: epochs and seeds, or for a study the runs one by
// one.
type Protocol struct {
	Epochs int
	Seeds  string // as -seeds takes them
	Runs   []Run
}

// Protocols are the budgets -protocol names.
var Protocols = map[string]Protocol{
	"reduced":     {Epochs: 5, Seeds: "1"},
	"paper":       {Epochs: 100, Seeds: "1,2,3"},
	"tuned":       {Epochs: Tuned.Epochs, Seeds: Tuned.Seeds},
	"paper-study": {Epochs: 100, Runs: PaperStudy},
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
