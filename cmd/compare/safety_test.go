package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// compare refuses, before loading any data, an OUT or a run directory
// another holder has locked, naming the holder's PID (here this process,
// through a lock of its own).
func TestRefusesLockedDirectories(t *testing.T) {
	if !runlock.Exclusive {
		t.Skip("no flock on this system")
	}
	for _, held := range []string{".", "linear-seed1"} {
		t.Run(held, func(t *testing.T) {
			out := t.TempDir()
			dir := filepath.Join(out, held)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			l, err := runlock.Acquire(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			o, err := parseFlags([]string{"-dataset", "multi-mnist", "-methods", "linear", "-data-dir", t.TempDir(), "-out", out}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o, &bytes.Buffer{})
			if !errors.Is(err, runlock.ErrHeld) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
				t.Errorf("error %v, want ErrHeld naming process %d", err, os.Getpid())
			}
		})
	}
}

// How a comparison ended decides the exit status: 3 only for an
// interruption whose state was saved, 2 for runs too big for the machine
// (its flags ask for them).
func TestReport(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("linear seed 1: %w", experiment.ErrInterrupted), 3},
		{fmt.Errorf("linear seed 1: %w: disk full", experiment.ErrUnsaved), 4},
		{fmt.Errorf("linear seed 1: %w", cli.Usage(fmt.Errorf("%w: -particles 100000: the run needs at least 561.1 GiB", sysmem.ErrTooBig))), 2},
		{errors.New("other settings"), 1},
	} {
		if got := cli.Status(tc.err); got != tc.want {
			t.Errorf("%v: status %d, want %d", tc.err, got, tc.want)
		}
	}
}
