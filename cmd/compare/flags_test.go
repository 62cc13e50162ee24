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
