package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data/files"
)

// A method that cannot train the ensemble asked for is a bad command
// line, refused before any data load: linear-pref with one particle, on
// SARCOS's 7 tasks, on a directory whose tasks.json names 3 (its data
// files are not even there); -preset with a method other than MT-SGD.
func TestRefusesUnfitMethodBeforeLoading(t *testing.T) {
	three := t.TempDir()
	if err := files.WriteDescription(three, files.Description{Tasks: []files.TaskSpec{
		{Name: "a", Kind: "regression"}, {Name: "b", Kind: "regression"}, {Name: "c", Kind: "regression"},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "multi-mnist", "-method", "linear-pref", "-particles", "1"}, "it needs at least 2 particles, not 1"},
		{[]string{"-dataset", "sarcos", "-method", "linear-pref"}, "on sarcos (7 tasks): it weighs two tasks against each other: it needs exactly 2, not 7"},
		{[]string{"-data", three, "-method", "linear-pref"}, "on files (3 tasks)"},
		{[]string{"-dataset", "multi-mnist", "-method", "pcgrad", "-preset", "paper"}, "-preset paper sets the choices of mtsgd; -method pcgrad takes none of them"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		_, err := parseFlags(append(tc.args, "-out", out), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A train refused after it locked a -out it created (its data missing)
// leaves no -out behind holding the lock file alone, nor the folders it
// made above it; a -out that was there stays.
func TestRefusedRunLeavesNoOut(t *testing.T) {
	captureLog(t)
	root := t.TempDir()
	missing := filepath.Join(root, "no-data")
	for _, out := range []string{filepath.Join(root, "run"), filepath.Join(root, "a", "b", "run")} {
		o, err := parseFlags([]string{"-data", missing, "-out", out, "-progress=false"}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := run(context.Background(), o); err == nil {
			t.Fatalf("-data %s: trained", missing)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("-out %s: %s holds %v after the refusal", out, root, entries)
		}
	}
	there := filepath.Join(root, "there")
	os.Mkdir(there, 0o755)
	o, _ := parseFlags([]string{"-data", missing, "-out", there, "-progress=false"}, &bytes.Buffer{})
	if err := run(context.Background(), o); err == nil {
		t.Fatal("trained")
	}
	if _, err := os.Stat(there); err != nil {
		t.Errorf("the -out that was there: %v", err)
	}
}
