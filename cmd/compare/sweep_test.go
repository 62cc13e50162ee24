package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// mainEnv makes the test binary run compare's main instead of the tests,
// so that tests can run compare as a separate process (killed, or started
// by Slurm) without building it.
const mainEnv = "MTSGD_COMPARE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// compareCmd is compare, as a process, with args.
func compareCmd(args ...string) (*exec.Cmd, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	return cmd, nil
}

// sweepArgs is a tiny comparison on real Multi-MNIST: 2 methods × 2
// seeds, 4 cells of a few seconds each.
func sweepArgs(epochs string) []string {
	return []string{"-dataset", "multi-mnist", "-methods", "linear,single", "-seeds", "1,2", "-epochs", epochs, "-lr", "0.01",
		"-particles", "2", "-train-limit", "64", "-test-limit", "40"}
}

// tables are OUT/compare.csv and compare.md without the seconds per
// epoch, which no two runs share.
func tables(t *testing.T, out string) (csvText, md string) {
	t.Helper()
	f, err := os.Open(filepath.Join(out, "compare.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(strings.Join(r[:len(r)-1], ",") + "\n")
	}
	raw, err := os.ReadFile(filepath.Join(out, "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	var m strings.Builder
	for _, l := range strings.Split(string(raw), "\n") {
		if i := strings.LastIndex(strings.TrimSuffix(l, " |"), "|"); strings.HasPrefix(l, "|") && i > 0 {
			l = l[:i]
		}
		m.WriteString(l + "\n")
	}
	return b.String(), m.String()
}

// The plan lists every (method, seed) in the order compare runs them;
// the modes refuse flags that do not go with them; -slurm writes a job
// array over the plan with the resources asked for and a Kubernetes
// Indexed Job of the same size; a plain compare writes the same plan.
func TestSweepFiles(t *testing.T) {
	out := t.TempDir()
	o, err := parseFlags(append(sweepArgs("1"), "-slurm", "-slurm-cpus", "3", "-slurm-mem", "6G", "-slurm-time", "1:00:00",
		"-slurm-partition", "short", "-data-dir", "/data/x", "-out", out), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := dispatch(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for i, c := range p.Cells {
		if c.Index != i || c.Settings.Seed != c.Seed || c.Settings.Epochs != 1 || c.Settings.Particles != 2 || c.Dataset != "multi-mnist" {
			t.Errorf("cell %d: %+v", i, c)
		}
		cells = append(cells, c.Dir)
	}
	if got := strings.Join(cells, " "); got != "linear-seed1 single-seed1 linear-seed2 single-seed2" {
		t.Errorf("cells %s", got)
	}
	script, err := os.ReadFile(filepath.Join(out, plan.SbatchFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#!/bin/bash\n", "\n#SBATCH --array=0-3\n", "\n#SBATCH --cpus-per-task=3\n", "\n#SBATCH --mem=6G\n",
		"\n#SBATCH --time=1:00:00\n", "\n#SBATCH --partition=short\n", "\n#SBATCH --output=\"" + filepath.Join(out, LogDir, "%A_%a.out") + "\"\n",
		` -cell "$SLURM_ARRAY_TASK_ID" -out '` + out + `' -workers "${SLURM_CPUS_PER_TASK:-1}" -data-dir '/data/x'` + "\n"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("%s lacks %q:\n%s", plan.SbatchFile, want, script)
		}
	}
	if st, err := os.Stat(filepath.Join(out, LogDir)); err != nil || !st.IsDir() {
		t.Errorf("log folder: %v", err)
	}
	job, err := os.ReadFile(filepath.Join(out, JobFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Job\n", "completionMode: Indexed\n", "completions: 4\n", `"$(JOB_COMPLETION_INDEX)"`, "memory: 6Gi\n", `cpu: "3"`} {
		if !strings.Contains(string(job), want) {
			t.Errorf("%s lacks %q:\n%s", JobFile, want, job)
		}
	}
	planJSON, _ := os.ReadFile(filepath.Join(out, plan.PlanFile))
	o2, err := parseFlags(append(sweepArgs("1"), "-plan", "-out", t.TempDir()), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := makePlan(o2, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(o2.Out, plan.PlanFile)); !bytes.Equal(planJSON, again) {
		t.Errorf("-plan and -slurm write different plans:\n%s\n%s", planJSON, again)
	}

	for _, bad := range [][]string{
		{"-cell", "0", "-aggregate", "-out", out},
		{"-cell", "0"},
		{"-cell", "0", "-out", out, "-methods", "linear"},
		{"-aggregate", "-out", out, "-seeds", "1"},
		{"-cell", "-2", "-out", out},
		{"-dataset", "multi-mnist", "-submit", "-out", out},
		{"-dataset", "multi-mnist", "-slurm-cpus", "2"},
	} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	o3, err := parseFlags([]string{"-cell", "4", "-out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), o3, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "cells 0 to 3") || cli.Status(err) != 2 {
		t.Errorf("cell out of range: %v, status %d, want 2 (a bad command line)", err, cli.Status(err))
	}
	if err := runCell(context.Background(), Options{Out: t.TempDir(), Workers: 1}, 0); err == nil || !strings.Contains(err.Error(), "no plan") {
		t.Errorf("no plan: %v", err)
	}
	// A plan this binary would not make (edited, or from other defaults)
	// is refused.
	edited := strings.Replace(string(planJSON), `"batch": 256`, `"batch": 128`, 1)
	if err := os.WriteFile(filepath.Join(out, plan.PlanFile), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Read(out); err == nil || !strings.Contains(err.Error(), "cell 0 differs") {
		t.Errorf("edited plan: %v", err)
	}
}

// A sweep cut off anywhere is completed by running its missing cells, and
// gives the table of an uninterrupted comparison: cell 0 runs whole, cell
// 1 is killed (SIGKILL, as a node failure) in its second epoch, cells 2
// and 3 never start. -aggregate then tabulates what has finished, names
// the missing cells and ends with status 5; rerunning cells 1 to 3 (cell
// 1 resumes from its last epoch) completes it, and the tables equal those
// of compare run in one process, but for the seconds.
func TestSweepCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks on real data")
	}
	_, _, err := experiment.LoadData(experiment.Settings{Dataset: "multi-mnist", Seed: 1}, "")
	testenv.CheckData(t, err)
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	ctx := context.Background()

	whole := t.TempDir()
	o, err := parseFlags(append(sweepArgs("3"), "-out", whole), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	wantCSV, wantMD := tables(t, whole)

	out := t.TempDir()
	o.Out = out
	if _, err := makePlan(o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := runCell(ctx, o, 0); err != nil {
		t.Fatal(err)
	}
	// A finished cell reads as finished while another process holds its
	// lock (a job array's cells read the same search results at once).
	p, err := plan.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	held, err := runlock.Acquire(filepath.Join(out, p.Cells[0].Dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Aggregate(out, &bytes.Buffer{}); !errors.Is(err, plan.ErrMissing) || !strings.Contains(err.Error(), "3 of 4 (cells 1,2,3)") {
		t.Errorf("aggregate with the finished cell 0 under another's lock: %v; want cells 1 to 3 missing", err)
	}
	held.Release()
	killInSecondEpoch(t, out, 1, filepath.Join(out, "single-seed1"))

	err = plan.Aggregate(o.Out, &bytes.Buffer{})
	if !errors.Is(err, plan.ErrMissing) || cli.Status(err) != 5 {
		t.Fatalf("aggregate of a cut-off sweep: %v, want status 5", err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
	for _, want := range []string{"| linear | top-left |", "Missing cells, 3 of 4", "--array=1,2,3 ",
		"- 1 single-seed1: interrupted in epoch 2 of 3", "- 2 linear-seed2: not started", "- 3 single-seed2: not started"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md of a cut-off sweep lacks %q:\n%s", want, md)
		}
	}
	for _, i := range []int{1, 2, 3} {
		if err := runCell(ctx, o, i); err != nil {
			t.Fatal(err)
		}
	}
	var stdout bytes.Buffer
	if err := plan.Aggregate(o.Out, &stdout); err != nil {
		t.Fatal(err)
	}
	gotCSV, gotMD := tables(t, out)
	if n := strings.Count(gotCSV, "\n"); n != 1+2*2 {
		t.Errorf("compare.csv has %d lines, want a header and 4 rows:\n%s", n, gotCSV)
	}
	if gotCSV != wantCSV || gotMD != wantMD {
		t.Errorf("completed sweep:\n%s\n%s\nuninterrupted:\n%s\n%s", gotCSV, gotMD, wantCSV, wantMD)
	}
	for _, f := range []string{plan.CurvesFile, filepath.Join("linear-seed1", curves.FileName), filepath.Join("single-seed1", curves.FileName)} {
		testenv.CheckPNG(t, filepath.Join(out, f))
	}
	// A finished cell is not trained again.
	manifest := filepath.Join(out, "linear-seed1", "last", "manifest.json")
	before, _ := os.Stat(manifest)
	if err := runCell(ctx, o, 0); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(manifest); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a finished cell was trained again")
	}
	// Nor is one that lost its result file (a process killed between its
	// last checkpoint and the file): the file is made again from last/.
	result := filepath.Join(out, "linear-seed1", plan.ResultFile)
	want, err := os.ReadFile(result)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(result); err != nil {
		t.Fatal(err)
	}
	if err := runCell(ctx, o, 0); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(manifest); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a finished cell without its result file was trained again")
	}
	if got, err := os.ReadFile(result); err != nil || !bytes.Equal(got, want) {
		t.Errorf("result file made again from last/: %v\n%s\nwant\n%s", err, got, want)
	}
}

// killInSecondEpoch runs compare -cell i in a process and kills it with
// SIGKILL once its first epoch is in dir's metrics.jsonl.
func killInSecondEpoch(t *testing.T, out string, i int, dir string) {
	t.Helper()
	cmd, err := compareCmd("-cell", strconv.Itoa(i), "-out", out, "-workers", "1")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "metrics.jsonl")); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("cell %d ended before it could be killed: %v\n%s", i, err, logs.String())
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatalf("cell %d wrote no epoch in 2 minutes:\n%s", i, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatalf("cell %d finished before SIGKILL reached it:\n%s", i, logs.String())
	}
}

// -plan refuses to replace another comparison's plan in OUT, naming the
// flag that differs and writing nothing, unless -replace-plan says so;
// the same flags, and a protocol that appends cells, write it again.
func TestPlanRefusesAnotherPlan(t *testing.T) {
	out := t.TempDir()
	write := func(extra ...string) error {
		o, err := parseFlags(append(append(sweepArgs("1"), "-plan", "-out", out), extra...), &bytes.Buffer{})
		if err != nil {
			return err
		}
		return dispatch(context.Background(), o, &bytes.Buffer{})
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, plan.PlanFile))
	if err := write(); err != nil {
		t.Errorf("the same plan again: %v", err)
	}
	err := write("-epochs", "2")
	if err == nil || !strings.Contains(err.Error(), "-epochs") || !strings.Contains(err.Error(), "-replace-plan") || cli.Status(err) != cli.ExitUsage {
		t.Fatalf("another comparison's plan: %v (status %d), want a usage error naming -epochs and -replace-plan", err, cli.Status(err))
	}
	if after, _ := os.ReadFile(filepath.Join(out, plan.PlanFile)); !bytes.Equal(before, after) {
		t.Error("the refused plan was written")
	}
	if err := write("-epochs", "2", "-replace-plan"); err != nil {
		t.Fatalf("-replace-plan: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(out, plan.PlanFile)); bytes.Equal(before, after) {
		t.Error("-replace-plan did not replace the plan")
	}
	if _, err := parseFlags(append(sweepArgs("1"), "-aggregate", "-out", out, "-replace-plan"), &bytes.Buffer{}); err == nil {
		t.Error("-replace-plan with -aggregate: no error")
	}
}

// Two method specs that train the same runs under two names are refused
// before anything is planned, naming both: the same rate written two
// ways, a spec's rate that is the comparison's, the same options in
// another order.
func TestSpecsTrainingTheSameRunsRefused(t *testing.T) {
	for _, methods := range []string{"linear@lr=0.01,linear@lr=1e-2", "linear,linear@lr=0.05", "cagrad@c=0.2@repel,cagrad@repel@c=0.2"} {
		args := []string{"-dataset", "multi-mnist", "-methods", methods, "-seeds", "1", "-lr", "0.05", "-plan", "-out", t.TempDir()}
		_, err := parseFlags(args, &bytes.Buffer{})
		first, second, _ := strings.Cut(methods, ",")
		if err == nil || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), second) {
			t.Errorf("-methods %s: error %v, want one naming both", methods, err)
		}
	}
	if _, err := parseFlags([]string{"-dataset", "multi-mnist", "-methods", "linear,linear@lr=0.1", "-lr", "0.05", "-plan", "-out", t.TempDir()}, &bytes.Buffer{}); err != nil {
		t.Errorf("two rates: %v", err)
	}
}
