package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// -protocol paper-study plans its runs one by one, seed 1 of every
// method spec first, each spec's own rate and score scale in its
// settings and its run directory.
func TestPaperStudyPlan(t *testing.T) {
	o, err := parseFlags([]string{"-dataset", "multi-mnist", "-protocol", "paper-study", "-plan", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	p := o.plan()
	want := []struct {
		dir   string
		lr    float64
		scale string
	}{
		{"mtsgd-authors-params-seed1", 0.001, "normalized"}, {"linear-seed1", 0.001, "mean"}, {"linear-pref-seed1", 0.001, "mean"},
		{"mgda-seed1", 0.001, "mean"}, {"pareto-mtl-seed1", 0.001, "mean"}, {"moo-svgd-normalized-seed1", 0.001, "normalized"},
		{"mtsgd-authors-params-lr0.01-seed1", 0.01, "normalized"}, {"linear-lr0.1-seed1", 0.1, "mean"},
		{"moo-svgd-lr0.01-normalized-seed1", 0.01, "normalized"},
		{"mtsgd-authors-params-seed2", 0.001, "normalized"}, {"linear-seed2", 0.001, "mean"}, {"moo-svgd-normalized-seed2", 0.001, "normalized"},
		{"linear-pref-seed2", 0.001, "mean"},
		{"mtsgd-authors-params-seed3", 0.001, "normalized"}, {"linear-seed3", 0.001, "mean"}, {"moo-svgd-normalized-seed3", 0.001, "normalized"},
		{"linear-pref-seed3", 0.001, "mean"},
		{"linear-lr0.1-seed2", 0.1, "mean"}, {"mtsgd-authors-params-lr0.01-seed2", 0.01, "normalized"},
		{"moo-svgd-lr0.01-normalized-seed2", 0.01, "normalized"},
		{"linear-lr0.1-seed3", 0.1, "mean"}, {"mtsgd-authors-params-lr0.01-seed3", 0.01, "normalized"},
		{"moo-svgd-lr0.01-normalized-seed3", 0.01, "normalized"},
		{"single-lr0.1-seed1", 0.1, "mean"}, {"pcgrad-lr0.03-seed1", 0.03, "mean"}, {"cagrad-lr0.1-seed1", 0.1, "mean"},
		{"nash-mtl-lr0.1-seed1", 0.1, "mean"}, {"imtl-g-lr0.1-seed1", 0.1, "mean"}, {"aligned-mtl-lr0.1-seed1", 0.1, "mean"},
		{"upgrad-lr0.1-seed1", 0.1, "mean"}, {"uw-lr0.03-seed1", 0.03, "mean"},
		{"gradnorm-lr0.03-seed1", 0.03, "mean"}, {"dwa-lr0.03-seed1", 0.03, "mean"},
		{"rlw-lr0.1-seed1", 0.1, "mean"}, {"famo-lr0.1-seed1", 0.1, "mean"},
	}
	if len(p.Cells) != len(want) || !p.Assess {
		t.Fatalf("%d cells, assess %v", len(p.Cells), p.Assess)
	}
	for i, w := range want {
		c := p.Cells[i]
		scale := c.Settings.ScoreScale.String()
		if scale == "" {
			scale = "mean"
		}
		if c.Dir != w.dir || c.Settings.LR != w.lr || scale != w.scale || c.Settings.Epochs != 100 || c.Settings.Seed != c.Seed {
			t.Errorf("cell %d: %s lr %v scale %q epochs %d, want %s lr %v scale %q", i, c.Dir, c.Settings.LR, scale, c.Settings.Epochs, w.dir, w.lr, w.scale)
		}
	}
	for _, bad := range [][]string{
		{"-dataset", "multi-mnist", "-protocol", "paper-study", "-methods", "linear"},
		{"-dataset", "multi-mnist", "-protocol", "paper-study", "-seeds", "4"},
		{"-dataset", "multi-mnist", "-methods", "linear@lr=-1"},
		{"-dataset", "multi-mnist", "-methods", "linear@lr=0.1@lr=0.2"},
		{"-dataset", "multi-mnist", "-methods", "moo-svgd@scale=huge"},
		{"-dataset", "multi-mnist", "-methods", "linear@momentum=0"},
	} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A study's finished cell is assessed into its result file (last/ and
// best/, raw and after temperature scaling, against Multi-Fashion's
// inputs), and -aggregate writes the study's tables from it, listing the
// cells still missing.
func TestPaperStudyAssesses(t *testing.T) {
	out := t.TempDir()
	args := []string{"-dataset", "multi-mnist", "-protocol", "paper-study", "-epochs", "1", "-particles", "2",
		"-train-limit", "64", "-test-limit", "100", "-out", out}
	o, err := parseFlags(append(args, "-plan"), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	o, err = parseFlags([]string{"-cell", "2", "-out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	err = dispatch(context.Background(), o, &bytes.Buffer{})
	testenv.CheckData(t, err)
	if err != nil {
		t.Fatal(err)
	}
	res, ok, err := plan.ReadResult(filepath.Join(out, "linear-pref-seed1"))
	if err != nil || !ok {
		t.Fatalf("result: %v %v", ok, err)
	}
	a := res.Assessed
	if a == nil || a.Best == nil || a.Last.Epoch != 1 || len(a.Last.Temperatures) != 2 || a.Last.OOD == nil ||
		a.Last.OOD.Dataset != "multi-fashion" || a.Last.OOD.OutExamples != 100 || len(a.Last.Tasks) != 2 || a.Last.Tasks[0].Calibrated == nil {
		t.Fatalf("assessed: %+v", a)
	}
	// The raw scores of last/ are the history's last test line.
	for _, l := range plan.LastTest(res.History) {
		for _, at := range a.Last.Tasks {
			if at.Task == l.Task && *at.Raw.Classification != *l.Classification {
				t.Errorf("%s: assessed %+v, history %+v", l.Task, *at.Raw.Classification, *l.Classification)
			}
		}
	}
	o, err = parseFlags([]string{"-aggregate", "-out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), o, &bytes.Buffer{}); !errors.Is(err, plan.ErrMissing) {
		t.Fatalf("aggregate: %v", err)
	}
	tables, err := os.ReadFile(filepath.Join(out, study.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| linear-pref | top-left | 1 | 1 |", "## At best/", "## At the epoch of best test accuracy",
		fmt.Sprintf("Runs still to finish, %d of %d", len(plan.PaperStudy)-1, len(plan.PaperStudy))} {
		if !strings.Contains(string(tables), want) {
			t.Errorf("%s lacks %q:\n%s", study.File, want, tables)
		}
	}
	for _, f := range []string{study.ReadmeFile, study.CalibrationChart, study.OODChart} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// The paper study's committed tables are what -aggregate makes of its
// committed plan and result files alone (no checkpoints): study.md and
// the READMEs' share of it are rebuilt here and must match, once some run
// has finished.
func TestPaperStudyTablesFromCommittedFiles(t *testing.T) {
	src := "../../docs/results/paper-multi-mnist"
	out := aggregateCopy(t, src)
	for _, name := range []string{study.File, study.ReadmeFile} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, os.ErrNotExist) {
			if strings.Contains(string(got), "| mtsgd") || strings.Contains(string(got), "| MT-SGD") {
				t.Fatalf("runs have finished but %s/%s is not committed", src, name)
			}
			continue // no run has finished yet
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("%s/%s is not what -aggregate makes of the committed files:\n%s", src, name, got)
		}
	}
}

// aggregateCopy runs -aggregate on a copy of the plan and result files
// of the sweep in src, and returns the copy's directory.
func aggregateCopy(t *testing.T, src string) string {
	t.Helper()
	out := t.TempDir()
	copyResults(t, src, out)
	o, err := parseFlags([]string{"-aggregate", "-out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), o, &bytes.Buffer{}); err != nil && !errors.Is(err, plan.ErrMissing) {
		t.Fatal(err)
	}
	return out
}

// readmeMarker stands, in a README, before a table that -aggregate
// writes: the file it is in (from the repository's root) and the heading
// of its section there.
var readmeMarker = regexp.MustCompile(`^<!-- table from (\S+): (.+) -->$`)

// The READMEs show the study's tables as -aggregate writes them into
// study.ReadmeFile from the committed plan and result files: the table
// after each marker is its section's, line for line, and any README table
// headed as one of those has a marker.
func TestReadmesShowGeneratedTables(t *testing.T) {
	const root = "../.."
	sections := map[string]map[string][]string{} // file → heading → table lines
	headers := map[string]bool{}                 // the tables' header lines
	files, err := filepath.Glob(filepath.Join(root, "docs/results/*", study.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(aggregateCopy(t, filepath.Dir(f)), study.ReadmeFile))
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		sections[filepath.ToSlash(rel)] = readmeSections(string(b))
		for _, table := range sections[filepath.ToSlash(rel)] {
			headers[table[0]] = true
		}
	}
	readmes, err := filepath.Glob(filepath.Join(root, "docs/results/*/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, readme := range append([]string{filepath.Join(root, "README.md")}, readmes...) {
		b, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		marker := -1 // the line of the last marker not yet followed by its table
		for i, l := range lines {
			if m := readmeMarker.FindStringSubmatch(l); m != nil {
				marker = i
				continue
			}
			if !strings.HasPrefix(l, "|") || (i > 0 && strings.HasPrefix(lines[i-1], "|")) {
				if strings.TrimSpace(l) != "" {
					marker = -1
				}
				continue
			}
			// l heads a table.
			if marker < 0 {
				if headers[l] {
					t.Errorf("%s:%d: a table of %s without a marker saying which", readme, i+1, study.ReadmeFile)
				}
				continue
			}
			m := readmeMarker.FindStringSubmatch(lines[marker])
			marker = -1
			want, ok := sections[m[1]][m[2]]
			if !ok {
				t.Errorf("%s:%d: %s has no table %q", readme, i+1, m[1], m[2])
				continue
			}
			got := lines[i:]
			for j, g := range got {
				if !strings.HasPrefix(g, "|") {
					got = got[:j]
					break
				}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s:%d: the table is not %s's %q, which -aggregate writes as\n%s", readme, i+1, m[1], m[2], strings.Join(want, "\n"))
			}
			marked++
		}
	}
	if len(files) > 0 && marked == 0 {
		t.Errorf("no README shows a table of %s", strings.Join(files, ", "))
	}
}

// readmeSections are the tables of a study.ReadmeFile by the heading of
// their section.
func readmeSections(text string) map[string][]string {
	out := map[string][]string{}
	heading := ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			heading = strings.TrimPrefix(l, "## ")
		case strings.HasPrefix(l, "|") && heading != "":
			out[heading] = append(out[heading], l)
		}
	}
	return out
}
