package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// eval -ckpt RUN/last while a process holds RUN (a train saving it):
// a checkpoint caught in the middle of a save is read again, and read
// whole once the save ends; one that stays unreadable is reported as
// being written by that process (its PID), not as damaged. Without a
// holder the damage is reported as it is, at once.
func TestCheckpointBeingWritten(t *testing.T) {
	defer func(d time.Duration) { checkpointRetry = d }(checkpointRetry)
	checkpointRetry = 20 * time.Millisecond
	dir := t.TempDir()
	writeLabelled(t, dir, 60, false)
	s := experiment.Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Particles, s.Epochs, s.Batch, s.Hidden = 2, 1, 16, "8"
	out, _ := trainSmall(t, s, "")
	last := filepath.Join(out, "last")
	whole := filepath.Join(t.TempDir(), "whole")
	testenv.CopyDir(t, last, whole)
	// A save half done: the manifest names a parameters file not there.
	entries, _ := os.ReadDir(last)
	var params string
	for _, e := range entries {
		if e.Name() != checkpoints.ManifestName && strings.HasSuffix(e.Name(), ".bin") && params == "" {
			params = e.Name()
		}
	}
	if params == "" {
		t.Fatalf("no .bin file in %s: %v", last, entries)
	}
	evaluate := func() error {
		o, err := parseFlags([]string{"-ckpt", last, "-json", "-workers", "1"}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		return run(context.Background(), o, &bytes.Buffer{})
	}
	os.Remove(filepath.Join(last, params))
	if err := evaluate(); err == nil || strings.Contains(err.Error(), "writes the run") {
		t.Errorf("damaged, no holder: %v", err)
	}
	lock, err := runlock.Acquire(out)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	err = evaluate()
	if cli.Status(err) != cli.ExitError || err == nil || !strings.Contains(err.Error(), "while process "+strconv.Itoa(os.Getpid())+" (a train; lock file "+filepath.Join(out, runlock.Name)+") writes the run") {
		t.Errorf("held and unreadable: status %d, %v", cli.Status(err), err)
	}
	// The save ends while eval waits: it reads the whole checkpoint.
	done := make(chan struct{})
	go func() {
		time.Sleep(30 * time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(whole, params))
		os.WriteFile(filepath.Join(last, params), b, 0o644)
		close(done)
	}()
	err = evaluate()
	<-done
	if err != nil {
		t.Errorf("held, the save ending while eval waits: %v", err)
	}
}
