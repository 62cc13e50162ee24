package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// tunedArgs is a tiny tuned comparison on real Multi-MNIST: linear and
// MOO-SVGD (whose search also tries the score scales), rates 0.003 and
// 0.01 and above them 0.03, 2 seeds, 2 particles, a few hundred
// composites.
func tunedArgs(out string) []string {
	return []string{"-dataset", "multi-mnist", "-protocol", "tuned", "-methods", "linear,moo-svgd", "-lrs", "0.01,0.003", "-extend-lrs", "0.03",
		"-seeds", "1,2", "-epochs", "1", "-search-epochs", "1", "-search-train-limit", "200",
		"-particles", "2", "-train-limit", "300", "-test-limit", "100", "-out", out}
}

// The tuned protocol end to end on a tiny budget, its cells run one
// process-call each as a sweep runs them. The search's test figures are
// edited so that the test split prefers another candidate than the
// validation split does: the final runs train at the validation choice.
// The table carries mean ± sd over the two seeds; aggregating a copy of
// the result files and the plan alone (no checkpoints) writes the same
// tables; a final cell run before its search is refused.
func TestTunedProtocol(t *testing.T) {
	needMultiMNIST(t)
	out := t.TempDir()
	o, err := parseFlags(tunedArgs(out), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := makePlan(o, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var search, final []plan.Cell
	for _, c := range p.Cells {
		if c.Stage == plan.StageSearch {
			search = append(search, c)
		} else {
			final = append(final, c)
		}
	}
	// linear: 2 rates and 1 above; moo-svgd: (2 rates and 1 above) × 2
	// scales; then 2 methods × 2 seeds.
	if len(search) != 9 || len(final) != 4 || p.Cells[0].Candidate.LR != 0.003 || final[0].Settings.LR != 0 ||
		p.Cells[2].Level != 1 || p.Cells[2].Candidate.LR != 0.03 {
		t.Fatalf("plan: %d search and %d final cells, first %+v, third %+v", len(search), len(final), p.Cells[0], p.Cells[2])
	}
	cell := func(c plan.Cell) error { return runCell(context.Background(), Options{Out: out, Workers: 2}, c.Index) }
	if err := cell(final[0]); err == nil || !strings.Contains(err.Error(), "the search of linear has not finished") {
		t.Fatalf("final cell before the search: %v", err)
	}
	// An extension before the grid below it has finished is refused.
	if err := cell(p.Cells[2]); err == nil || !strings.Contains(err.Error(), "the search of linear below this rate has not finished") {
		t.Fatalf("extension before its grid: %v", err)
	}
	for _, c := range search {
		if err := cell(c); err != nil {
			t.Fatal(err)
		}
	}

	// Per method: the candidate of the lowest validation NLL, computed
	// here from the result files; an extension is tried exactly when the
	// grid's best (for its scale) is the grid's largest rate. The test
	// lines are then edited so that the worst validation candidate is by
	// far the best on test.
	wantLR := map[string]plan.Candidate{}
	for _, m := range p.Methods {
		worst := math.Inf(-1)
		var worstDir string
		var grid, all []scored
		for _, c := range search {
			if c.Method != m {
				continue
			}
			path := filepath.Join(out, c.Dir, plan.ResultFile)
			var res plan.Result
			readJSON(t, path, &res)
			if c.Level > 0 {
				gridBest := byRule(grid)
				tried := res.Skipped == ""
				want := gridBest.LR == 0.01 && gridBest.ScoreScale == c.Candidate.ScoreScale
				t.Logf("%s: tried %v (the grid's best %v) %s", c.Dir, tried, gridBest, res.Skipped)
				if tried != want {
					t.Errorf("%s: tried %v (%s), the grid's best %v", c.Dir, tried, res.Skipped, gridBest)
				}
				if !tried {
					continue
				}
			}
			var sum float64
			for _, l := range res.History {
				if l.Split == "valid" {
					sum += l.NLL / 2
				}
			}
			if c.Level == 0 {
				grid = append(grid, scored{c.Candidate, sum})
			}
			all = append(all, scored{c.Candidate, sum})
			if sum > worst {
				worst, worstDir = sum, c.Dir
			}
		}
		wantLR[m] = byRule(all)
		res := filepath.Join(out, worstDir, plan.ResultFile)
		testenv.EditJSON(t, res, func(v map[string]any) {
			for _, l := range v["history"].([]any) {
				if line := l.(map[string]any); line["split"] == "test" {
					line["nll"], line["accuracy"] = 1e-6, 1.0
				}
			}
		})
	}
	for _, c := range final {
		if err := cell(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range final {
		var res plan.Result
		readJSON(t, filepath.Join(out, c.Dir, plan.ResultFile), &res)
		if res.Settings.LR != wantLR[c.Method].LR {
			t.Errorf("%s trained at lr %v; the validation split chose %v", c.Dir, res.Settings.LR, wantLR[c.Method].LR)
		}
		if c.Method == "moo-svgd" && res.Settings.ScoreScale != wantLR[c.Method].ScoreScale {
			t.Errorf("%s: score scale %q, chosen %q", c.Dir, res.Settings.ScoreScale, wantLR[c.Method].ScoreScale)
		}
	}

	var stdout bytes.Buffer
	if err := plan.Aggregate(out, &stdout); err != nil {
		t.Fatal(err)
	}
	csv, md := tables(t, out)
	if !strings.Contains(md, "| linear | "+wantLR["linear"].String()+" | top-left | ") || !strings.Contains(md, " ± ") {
		t.Errorf("compare.md lacks the choice or mean ± sd:\n%s", md)
	}
	if !strings.Contains(stdout.String(), "| multi-mnist | chosen | seeds |") {
		t.Errorf("aggregate printed no summary table:\n%s", stdout.String())
	}
	for _, f := range []string{plan.SearchFile, study.SummaryFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	testenv.CheckPNG(t, filepath.Join(out, plan.TimeFile))

	// The plan and the result files alone rebuild the same tables.
	copyOut := t.TempDir()
	copyResults(t, out, copyOut)
	if err := plan.Aggregate(copyOut, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	csv2, md2 := tables(t, copyOut)
	if csv2 != csv || md2 != md {
		t.Errorf("tables from the result files alone differ:\n%s\n%s", md, md2)
	}
	for _, f := range []string{plan.SearchFile, study.SummaryFile} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(copyOut, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the result files alone", f)
		}
	}
}

// A search run that diverges is recorded as such, never chosen, and the
// sweep goes on; in a plain comparison a divergence stays an error.
func TestTunedDivergedCandidate(t *testing.T) {
	needMultiMNIST(t)
	out := t.TempDir()
	o, err := parseFlags([]string{"-dataset", "multi-mnist", "-protocol", "tuned", "-methods", "linear", "-lrs", "0.01,1e6",
		"-seeds", "1", "-epochs", "1", "-search-epochs", "1", "-particles", "2", "-train-limit", "300", "-test-limit", "100", "-out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var res plan.Result
	readJSON(t, filepath.Join(out, "search", "linear-lr1e+06", plan.ResultFile), &res)
	if res.Diverged == "" {
		t.Fatalf("lr 1e6 did not diverge: %+v", res.History)
	}
	readJSON(t, filepath.Join(out, "linear-seed1", plan.ResultFile), &res)
	if res.Settings.LR != 0.01 {
		t.Errorf("final run at lr %v, want 0.01", res.Settings.LR)
	}
	md, err := os.ReadFile(filepath.Join(out, plan.SearchFile))
	if err != nil || !strings.Contains(string(md), "| linear | lr 1e+06 | diverged |") {
		t.Errorf("search.md does not list the diverged run: %v\n%s", err, md)
	}

	plain, err := parseFlags([]string{"-dataset", "multi-mnist", "-methods", "linear", "-lr", "1e6", "-epochs", "1",
		"-particles", "2", "-train-limit", "300", "-test-limit", "100", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), plain, &bytes.Buffer{}); !errors.Is(err, experiment.ErrDiverged) {
		t.Errorf("plain comparison at lr 1e6: %v, want a divergence error", err)
	}
}

// The tuned protocol's flags: its search's defaults, and the errors of
// flags that do not go with it.
func TestTunedFlags(t *testing.T) {
	o, err := parseFlags([]string{"-dataset", "multi-fashion", "-protocol", "tuned"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Search.LRs, []float64{1e-3, 3e-3, 1e-2, 3e-2}) || o.Epochs != 3 || len(o.Seeds) != 3 ||
		!slices.Equal(o.Methods, tunedMethods) || o.Search.Seed != 1 || o.Search.Epochs != 2 {
		t.Errorf("defaults: %+v, search %+v", o, *o.Search)
	}
	p := o.plan()
	// 4 rates and 2 above per method, once per score scale (2) for a
	// kernel method without presets (moo-svgd), then 3 seeds per method.
	n := 0
	for _, spec := range o.Methods {
		name, _, _ := strings.Cut(spec, ":")
		m, err := experiment.LookupMethod(name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Kernels && !m.Presets {
			n += 2 * (4 + 2)
		} else {
			n += 4 + 2
		}
		n += 3
	}
	if !slices.Contains(o.Methods, "moo-svgd") || len(p.Cells) != n {
		t.Errorf("%d cells for %v, want %d", len(p.Cells), o.Methods, n)
	}
	if got, want := arrays(p), 4; len(got) != want {
		t.Errorf("Slurm arrays %q, want %d (the grid, two levels above, the final runs)", got, want)
	}
	if o, err := parseFlags([]string{"-dataset", "multi-mnist", "-protocol", "tuned", "-lrs", "0.1,0.2"}, &bytes.Buffer{}); err != nil || !slices.Equal(o.Search.Extend, []float64{0.3}) {
		t.Errorf("-lrs 0.1,0.2: extension %v, %v; want the default's rates above, 0.3", o.Search, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-protocol", "tuned", "-lr", "0.1"}, "-lr with -protocol tuned"},
		{[]string{"-lrs", "0.1"}, "-lrs needs -protocol tuned"},
		{[]string{"-protocol", "tuned", "-lrs", "0.1,x"}, `-lrs: "x" is not a positive learning rate`},
		{[]string{"-protocol", "tuned", "-lrs", "0.1,-1"}, `-lrs: "-1" is not a positive learning rate`},
		{[]string{"-protocol", "tuned", "-search-epochs", "0"}, "-search-epochs must be at least 1"},
		{[]string{"-protocol", "fast"}, `-protocol "fast" is not one of paper, paper-celeba, paper-study, reduced, tuned`},
		{[]string{"-protocol", "tuned", "-extend-lrs", "0.01"}, "-extend-lrs: 0.01 is not above the largest of -lrs, 0.03"},
	} {
		_, err := parseFlags(append([]string{"-dataset", "multi-mnist"}, tc.args...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, f := range []string{"-lrs", "-extend-lrs", "-search-epochs", "-search-train-limit", "-optimizer"} {
		_, err := parseFlags([]string{"-aggregate", "-out", "x", f, "1"}, &bytes.Buffer{})
		if want := f + " with -aggregate"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-aggregate %s: %v, want %q", f, err, want)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// copyResults copies what a repository keeps of a sweep in src, the plan
// and the run directories' result files, to dst.
func copyResults(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (d.Name() != plan.PlanFile && d.Name() != plan.ResultFile) {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// needMultiMNIST skips a test that trains on real Multi-MNIST in -short
// mode, fails it (or skips it, see testenv.CheckData) without the data,
// and silences the log until it ends.
func needMultiMNIST(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("trains networks on real data")
	}
	_, _, err := experiment.LoadData(experiment.Settings{Dataset: "multi-mnist", Seed: 1}, "")
	testenv.CheckData(t, err)
	log.SetOutput(&bytes.Buffer{})
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
}

// scored is a candidate and its mean validation NLL.
type scored struct {
	c   plan.Candidate
	nll float64
}

// byRule is the documented choice, computed here on its own: the lowest
// NLL; within 1e-4 of it, the lowest rate, then the first listed.
func byRule(runs []scored) plan.Candidate {
	best := math.Inf(1)
	for _, r := range runs {
		best = min(best, r.nll)
	}
	var c plan.Candidate
	for _, r := range runs {
		if r.nll <= best+1e-4 && (c.LR == 0 || r.c.LR < c.LR) {
			c = r.c
		}
	}
	return c
}
