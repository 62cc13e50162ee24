package experiment

import (
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data/files"
)

// CheckOOD refuses, from the settings alone, what an out-of-distribution
// detection cannot score: an unknown name, the file data set (never
// offered), the run's own data set, any for a run on files, a data set
// of another number of tasks.
func TestCheckOOD(t *testing.T) {
	for _, name := range OODDatasets() {
		if name == files.Name {
			t.Errorf("OODDatasets offers %s", name)
		}
	}
	multi := Defaults("multi-mnist")
	own := Defaults(files.Name)
	own.Files = &files.Spec{Dir: t.TempDir(), Tasks: []files.TaskSpec{{Name: "a", Kind: "regression"}}}
	for _, tc := range []struct {
		s       Settings
		dataset string
		want    string // "" passes
	}{
		{Settings{}, "multi-fashion", ""},
		{Settings{}, "nosuch", `-ood "nosuch" is not one of multi-mnist,`},
		{Settings{}, files.Name, `-ood "files" is not one of`},
		{multi, "multi-fashion", ""},
		{multi, "multi-mnist", "-ood multi-mnist: the run's own data set"},
		{multi, "sarcos", "-ood sarcos: it has 7 tasks, the run's data set multi-mnist 2"},
		{own, "multi-mnist", "-ood multi-mnist: the run is on your own files"},
	} {
		err := CheckOOD(tc.s, tc.dataset)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s against %s: %v, want %q", tc.dataset, tc.s.Dataset, err, tc.want)
		}
	}
}

// An AUROC on fewer than MinOODExamples examples on either side is
// warned about; on enough it is not.
func TestOODWarning(t *testing.T) {
	if w := (OOD{Dataset: "multi-fashion", InExamples: 1, OutExamples: 1}).Warning(); !strings.Contains(w, "rest on 1 in- and 1 out-of-distribution examples") {
		t.Errorf("one example each: %q", w)
	}
	if w := (OOD{Dataset: "multi-fashion", InExamples: 100, OutExamples: 250}).Warning(); w != "" {
		t.Errorf("100 and 250 examples: %q", w)
	}
}
