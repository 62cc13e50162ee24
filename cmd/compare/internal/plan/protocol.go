package plan

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
