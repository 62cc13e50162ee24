package experiment

import (
	"fmt"
	"strings"

	"github.com/mtsgd/mtsgd/data/files"
)

// MinOODExamples is the least examples on each side of an
// out-of-distribution AUROC that it rests on without a warning
// (OOD.Warning): on fewer it moves by whole steps of 1/n with each
// example, and one example on a side gives 0, ½ or 1.
const MinOODExamples = 100

// OODDatasets are the data sets an out-of-distribution detection can
// score against: every registered one but the file data set, whose
// directory it has no way to name.
func OODDatasets() []string {
	return DatasetsWith(func(d Dataset) bool { return d.Name != files.Name })
}

// CheckOOD refuses, before any data load, an out-of-distribution data
// set that cannot be scored against a run of s: a name not among
// OODDatasets, the run's own data set, any for a run on your own files
// (its tasks are yours, those of no built-in data set), or one with
// another number of tasks (TaskCount; the networks need the same
// tasks). An s without a data set checks the name alone.
func CheckOOD(s Settings, dataset string) error {
	names := OODDatasets()
	known := false
	for _, n := range names {
		known = known || n == dataset
	}
	switch {
	case !known:
		return fmt.Errorf("-ood %q is not one of %s", dataset, strings.Join(names, ", "))
	case s.Dataset == "":
		return nil
	case s.Dataset == dataset:
		return fmt.Errorf("-ood %s: the run's own data set; name another whose test inputs the run did not see", dataset)
	case s.Dataset == files.Name:
		return fmt.Errorf("-ood %s: the run is on your own files, whose tasks are those of no built-in data set; out-of-distribution detection needs another data set with the run's tasks", dataset)
	}
	if a, b := TaskCount(s), TaskCount(Defaults(dataset)); a != 0 && b != 0 && a != b {
		return fmt.Errorf("-ood %s: it has %d tasks, the run's data set %s %d (the networks need the same tasks)", dataset, b, s.Dataset, a)
	}
	return nil
}

// Warning is a warning, or "", about how few examples the AUROCs rest
// on (MinOODExamples).
func (o OOD) Warning() string {
	if o.InExamples >= MinOODExamples && o.OutExamples >= MinOODExamples {
		return ""
	}
	return fmt.Sprintf("-ood %s: the AUROCs rest on %d in- and %d out-of-distribution examples, fewer than the %d each that a figure needs: read them as anecdotes (-limit 0 scores all)",
		o.Dataset, o.InExamples, o.OutExamples, MinOODExamples)
}
