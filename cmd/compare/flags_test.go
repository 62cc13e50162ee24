package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
)

// -aggregate with an -out that does not exist (a typo) or is a file is a
// bad command line, and creates nothing.
func TestAggregateNeedsExistingOut(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{filepath.Join(dir, "typo", "sweep"), file} {
		err := dispatch(t.Context(), Options{Out: out, Aggregate: true, Cell: -1}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), out) {
			t.Errorf("-aggregate -out %s: %v, want an error naming it", out, err)
		}
		if status := cli.Status(err); status != 2 {
			t.Errorf("-aggregate -out %s: status %d, want 2", out, status)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "typo")); err == nil {
		t.Error("-aggregate created the missing -out")
	}
}

// compare has no -data flag, so -dataset files is refused as the command
// line, pointing to train -data, not to a flag compare lacks.
func TestRefusesOwnFiles(t *testing.T) {
	_, err := parseFlags([]string{"-dataset", "files", "-out", t.TempDir()}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "-dataset files: compare runs the built-in data sets; train your own files with train -data DIR") {
		t.Fatalf("error %v", err)
	}
}

// -protocol paper-study on SARCOS (7 tasks) plans no linear-pref run,
// which weighs two tasks, and says so; -methods naming it there, or
// -particles 1 with it, is refused as the command line (status 2).
func TestProtocolLeavesOutUnfitMethods(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	o, err := parseFlags([]string{"-dataset", "sarcos", "-protocol", "paper-study", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range o.Runs {
		if strings.HasPrefix(r.Method, "linear-pref") {
			t.Errorf("paper-study on sarcos plans %s seed %d", r.Method, r.Seed)
		}
	}
	if len(o.Runs) == 0 || !strings.Contains(logged.String(), "linear-pref left out: -method linear-pref on sarcos (7 tasks)") {
		t.Errorf("%d runs; log:\n%s", len(o.Runs), logged.String())
	}
	for _, args := range [][]string{
		{"-dataset", "sarcos", "-methods", "linear,linear-pref"},
		{"-dataset", "multi-mnist", "-methods", "linear-pref,linear", "-particles", "1"},
	} {
		_, err := parseFlags(append(args, "-out", t.TempDir()), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "linear-pref: -method linear-pref with -particles") {
			t.Errorf("%q: %v", args, err)
		}
	}
}
