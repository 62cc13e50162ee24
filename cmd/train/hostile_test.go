//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/experiment"
)

// trainTimed is trainProcess with a deadline: a train that hangs fails
// the test instead of blocking it.
func trainTimed(t *testing.T, args string, limit time.Duration) (int, string) {
	t.Helper()
	type result struct {
		status int
		log    string
	}
	done := make(chan result, 1)
	var proc *exec.Cmd
	go func() {
		s, l := trainProcess(t, args, func(cmd *exec.Cmd, _ string) { proc = cmd })
		done <- result{s, l}
	}()
	select {
	case r := <-done:
		return r.status, r.log
	case <-time.After(limit):
		if proc != nil {
			proc.Process.Kill()
		}
		t.Fatalf("train %s: still running after %v", args, limit)
	}
	return 0, ""
}

// A lock file that is a symlink is refused (status 1), and the file it
// names keeps its content.
func TestLockSymlinkRefused(t *testing.T) {
	out, other := t.TempDir(), t.TempDir()
	victim := filepath.Join(other, "V")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, ".lock")); err != nil {
		t.Fatal(err)
	}
	status, log := trainTimed(t, tiny+" -epochs 1 -out "+out, time.Minute)
	if status != cli.ExitError || !strings.Contains(log, "is a symbolic link, not a lock file") {
		t.Errorf("status %d, want 1 refusing the symlink; log:\n%s", status, log)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("%s now holds %q", victim, b)
	}
}

// A named pipe in place of a data file is refused at once, by name, with
// status 1, rather than blocking train in open(2) beyond SIGINT's reach.
func TestDataFIFORefused(t *testing.T) {
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "mnist")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "train-images-idx3-ubyte")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	status, log := trainTimed(t, tiny+" -epochs 1 -data-dir "+dataDir+" -out "+t.TempDir(), time.Minute)
	if status != cli.ExitError || !strings.Contains(log, fifo+": not a regular file but a named pipe") {
		t.Errorf("status %d, want 1 naming %s as a named pipe; log:\n%s", status, fifo, log)
	}
}

// Statuses follow the documented rules: a -valid larger than the data
// can hold out is a bad command line (2) naming -valid; so is a
// $MTSGD_MEMORY that is not a size.
func TestUsageStatuses(t *testing.T) {
	t.Run("MTSGD_MEMORY", func(t *testing.T) {
		t.Setenv("MTSGD_MEMORY", "garbage")
		status, log := trainTimed(t, tiny+" -epochs 1 -out "+t.TempDir(), time.Minute)
		if status != cli.ExitUsage || !strings.Contains(log, `$MTSGD_MEMORY "garbage": not a size`) {
			t.Errorf("status %d, want 2 naming $MTSGD_MEMORY; log:\n%s", status, log)
		}
	})
	t.Run("-valid", func(t *testing.T) {
		requireData(t)
		status, log := trainTimed(t, tiny+" -epochs 1 -valid 200000 -out "+t.TempDir(), 5*time.Minute)
		if status != cli.ExitUsage || !strings.Contains(log, "-valid 200000: leaves no training composites") {
			t.Errorf("status %d, want 2 naming -valid; log:\n%s", status, log)
		}
	})
}

// A directory holding only curves.png is not a run: the documented run
// files are last/, best/ and metrics.jsonl.
func TestCurvesAloneIsNoRun(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, curves.FileName), []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkFresh(Options{Out: out}); err != nil {
		t.Errorf("curves.png alone: %v", err)
	}
	if err := os.WriteFile(filepath.Join(out, experiment.MetricsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkFresh(Options{Out: out}); err == nil {
		t.Error("metrics.jsonl accepted")
	}
}

// metrics.jsonl cut to its first epoch after a finished run (as a failed
// write of the last epoch leaves it) is rebuilt whole by train -resume,
// which exits 0, and curves.png is drawn again.
func TestResumeRebuildsMetrics(t *testing.T) {
	requireData(t)
	out := t.TempDir()
	if status, log := trainTimed(t, tiny+" -epochs 2 -train-limit 64 -out "+out, 5*time.Minute); status != 0 {
		t.Fatalf("status %d; log:\n%s", status, log)
	}
	path := filepath.Join(out, experiment.MetricsFile)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(full, []byte("\n"))
	if err := os.WriteFile(path, bytes.Join(lines[:4], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(out, curves.FileName))
	if status, log := trainTimed(t, "-resume "+out, 5*time.Minute); status != 0 {
		t.Fatalf("resume: status %d; log:\n%s", status, log)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, full) {
		t.Errorf("metrics.jsonl after resume has %d lines, the run wrote %d", bytes.Count(again, []byte("\n")), bytes.Count(full, []byte("\n")))
	}
	if _, err := os.Stat(filepath.Join(out, curves.FileName)); err != nil {
		t.Errorf("curves.png: %v", err)
	}
}

// A checkpoint whose settings name an unknown data set, or hold a valid
// larger than the data, is refused naming the checkpoint and the field.
func TestCheckpointSettingsMessages(t *testing.T) {
	requireData(t)
	out := t.TempDir()
	if status, log := trainTimed(t, tiny+" -epochs 1 -train-limit 32 -out "+out, 5*time.Minute); status != 0 {
		t.Fatalf("status %d; log:\n%s", status, log)
	}
	last := filepath.Join(out, "last")
	manifest := filepath.Join(last, checkpoints.ManifestName)
	orig, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field string
		value       any
		want        string
	}{
		{"unknown data set", "dataset", "imagenet", last + `: checkpoint settings: data set \"imagenet\" is not one of`},
		{"huge valid", "valid", 200000, last + ": checkpoint settings: valid is 200000, which leaves no training composites"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(orig, &m); err != nil {
				t.Fatal(err)
			}
			m["settings"].(map[string]any)[tc.field] = tc.value
			b, _ := json.Marshal(m)
			if err := os.WriteFile(manifest, b, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(manifest, orig, 0o644)
			status, log := trainTimed(t, "-resume "+out, 5*time.Minute)
			if status != cli.ExitError || !strings.Contains(log, tc.want) {
				t.Errorf("status %d, want 1 saying %q; log:\n%s", status, tc.want, log)
			}
		})
	}
}

// interruptible returns as soon as its context ends, without waiting for
// a load that does not; a load that ends first gives its own result.
func TestInterruptible(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	defer close(block)
	done := make(chan error, 1)
	go func() { done <- interruptible(ctx, func() error { <-block; return nil }) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, errLoadInterrupted) || cli.Status(err) != cli.ExitInterrupted {
			t.Errorf("error %v, status %d; want errLoadInterrupted, 3", err, cli.Status(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("interruptible waited for the load")
	}
	want := errors.New("load failed")
	if err := interruptible(context.Background(), func() error { return want }); err != want {
		t.Errorf("error %v, want the load's", err)
	}
}
