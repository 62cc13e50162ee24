package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// tiny is a network run of a few steps on real Multi-MNIST.
const tiny = "-dataset multi-mnist -particles 2 -batch 16 -test-limit 32 -lr 0.01"

// requireData skips (or fails, in CI) a test that needs the real
// Multi-MNIST files when they are missing.
func requireData(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("trains networks on real data")
	}
	_, _, err := experiment.LoadData(experiment.Settings{Dataset: "multi-mnist", Seed: 1}, "")
	testenv.CheckData(t, err)
}

// trainProcess runs train (this test binary running main) with args,
// calling onLine with each line it logs, and returns its exit status and
// its log.
func trainProcess(t *testing.T, args string, onLine func(cmd *exec.Cmd, line string)) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), asMainEnv+"="+args)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stderr)
	var log strings.Builder
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		onLine(cmd, lines.Text())
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, log.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), log.String()
	}
	t.Fatalf("train: %v; log:\n%s", err, log.String())
	return 0, ""
}

// SIGINT while saving fails is not reported as a saved interruption:
// train exits with status 4, not 3, gives no resume hint, and names what
// failed and the last good checkpoint. Here the save of last/ fails
// because a file stands where the directory was (root ignores
// permissions); best/ holds epoch 1.
func TestInterruptWhileSavingFails(t *testing.T) {
	requireData(t)
	out := t.TempDir()
	status, log := trainProcess(t, tiny+" -epochs 2 -train-limit 960 -out "+out, func(cmd *exec.Cmd, line string) {
		if strings.Contains(line, "epoch 2/2: 6/60") {
			last := filepath.Join(out, "last")
			if err := os.RemoveAll(last); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(last, nil, 0o644); err != nil {
				t.Error(err)
			}
			cmd.Process.Signal(os.Interrupt)
		}
	})
	if status != cli.ExitUnsaved {
		t.Fatalf("train exited with status %d, want %d; log:\n%s", status, cli.ExitUnsaved, log)
	}
	for _, want := range []string{"could not be saved", "not a directory", "the last good checkpoint is " + filepath.Join(out, "best") + " (epoch 1"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "continue with") {
		t.Errorf("log gives the resume hint:\n%s", log)
	}
}

// How a run ended decides the exit status.
func TestReport(t *testing.T) {
	captureLog(t)
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("wrapped: %w", experiment.ErrInterrupted), cli.ExitInterrupted},
		{fmt.Errorf("%w: disk full", experiment.ErrUnsaved), cli.ExitUnsaved},
		{cli.Usage(fmt.Errorf("%w: -batch 100000: the run needs at least 64.8 GiB", sysmem.ErrTooBig)), cli.ExitUsage},
		{fmt.Errorf("runs/x/last: %w: -batch 100000000", sysmem.ErrTooBig), cli.ExitError}, // a checkpoint's settings: no flag
		{errors.New("diverged"), cli.ExitError},
		{fmt.Errorf("step 7, particle 2: %w", experiment.ErrDiverged), cli.ExitDiverged},
		{errLoadInterrupted, cli.ExitInterrupted},
	} {
		if got := cli.Status(tc.err); got != tc.want {
			t.Errorf("%v: status %d, want %d", tc.err, got, tc.want)
		}
	}
}

// train into a directory holding a run refuses, before loading any data,
// saying how to continue it; -overwrite (and a directory without one)
// passes on to the data, here missing.
func TestRefusesExistingRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		make      func(dir string) error
		overwrite bool
		refused   bool
	}{
		{"last/", func(dir string) error { return os.Mkdir(filepath.Join(dir, "last"), 0o755) }, false, true},
		{"best/", func(dir string) error { return os.Mkdir(filepath.Join(dir, "best"), 0o755) }, false, true},
		{"metrics.jsonl", func(dir string) error { return os.WriteFile(filepath.Join(dir, "metrics.jsonl"), nil, 0o644) }, false, true},
		{"last/ with -overwrite", func(dir string) error { return os.Mkdir(filepath.Join(dir, "last"), 0o755) }, true, false},
		{"empty", func(string) error { return nil }, false, false},
		{"other files", func(dir string) error { return os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644) }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			if err := tc.make(out); err != nil {
				t.Fatal(err)
			}
			args := []string{"-dataset", "multi-mnist", "-data-dir", t.TempDir(), "-out", out}
			if tc.overwrite {
				args = append(args, "-overwrite")
			}
			o, err := parseFlags(args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o)
			refused := err != nil && strings.Contains(err.Error(), "holds a run")
			if refused != tc.refused || (!refused && !errors.Is(err, data.ErrMissing)) {
				t.Fatalf("error %v; want refused %v, else the missing data", err, tc.refused)
			}
			if refused && !strings.Contains(err.Error(), "train -resume "+out) || refused && !strings.Contains(err.Error(), "-overwrite") {
				t.Errorf("error %q does not say -resume %s and -overwrite", err, out)
			}
		})
	}
	if _, err := parseFlags([]string{"-resume", "runs/x", "-overwrite"}, &bytes.Buffer{}); err == nil {
		t.Error("-overwrite accepted with -resume")
	}
}

// Run twice into one -out: the second is refused and leaves the first's
// checkpoint alone; with -overwrite it trains, replacing the run.
func TestOverwrite(t *testing.T) {
	requireData(t)
	out := t.TempDir()
	args := strings.Fields(tiny + " -progress=false -epochs 1 -train-limit 32 -out " + out)
	train := func(extra ...string) error {
		o, err := parseFlags(append(args, extra...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		return run(context.Background(), o)
	}
	if err := train(); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(out, "last", checkpoints.ManifestName)
	before, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := train(); err == nil || !strings.Contains(err.Error(), "holds a run") {
		t.Fatalf("second train: %v", err)
	}
	if after, _ := os.ReadFile(manifest); !bytes.Equal(after, before) {
		t.Error("the refused train changed last/")
	}
	if err := os.WriteFile(filepath.Join(out, "best", "stale.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := train("-overwrite", "-seed", "2"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(manifest); bytes.Equal(after, before) {
		t.Error("-overwrite left last/ as it was")
	}
	if _, err := os.Stat(filepath.Join(out, "best", "stale.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-overwrite kept the old best/: %v", err)
	}
}

// While a train process runs in a directory, a second train or train
// -resume there fails at once, naming its PID.
func TestSecondProcessRefused(t *testing.T) {
	requireData(t)
	if !runlock.Exclusive {
		t.Skip("no flock on this system")
	}
	out := t.TempDir()
	tried := false
	status, log := trainProcess(t, tiny+" -epochs 2 -train-limit 960 -out "+out, func(cmd *exec.Cmd, line string) {
		if tried || !strings.Contains(line, "epoch 1/2: 6/60") {
			return
		}
		tried = true
		defer cmd.Process.Signal(os.Interrupt)
		for _, args := range [][]string{strings.Fields(tiny + " -progress=false -epochs 1 -train-limit 32 -out " + out), {"-resume", out, "-progress=false"}} {
			o, err := parseFlags(args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o)
			if !errors.Is(err, runlock.ErrHeld) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
				t.Errorf("%v while train %d runs: %v", args, cmd.Process.Pid, err)
			}
		}
	})
	if !tried || status != cli.ExitInterrupted {
		t.Fatalf("train exited with %d, want %d; log:\n%s", status, cli.ExitInterrupted, log)
	}
}
