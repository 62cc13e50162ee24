package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/metrics"
)

// -reliability DIR is checked before anything loads or is computed: a
// DIR that is a file, or under one, is a bad command line (status 2),
// with nothing written.
func TestReliabilityCheckedFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		// No checkpoint at all: a check after the load would report that.
		o, err := parseFlags([]string{"-ckpt", filepath.Join(t.TempDir(), "none"), "-reliability", dir}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		err = run(context.Background(), o, &bytes.Buffer{})
		if cli.Status(err) != cli.ExitUsage || !strings.Contains(err.Error(), "-reliability "+dir+": "+file+" is not a directory") {
			t.Errorf("-reliability %s: status %d, %v", dir, cli.Status(err), err)
		}
	}
}

// A diagram that cannot be written (a full disk) leaves nothing behind:
// the diagrams written before it are removed, and so is the directory
// eval made for them; a directory that was there stays, with what it
// held.
func TestReliabilityAllOrNothing(t *testing.T) {
	defer func(w func(string, fs.FileMode, func(io.Writer) error) error) { writeFile = w }(writeFile)
	class := metrics.Score{Classification: &metrics.Classification{Accuracy: 0.75, Brier: 0.3, ECE: 0.05, NLL: 0.6, Confidence: 0.7}}
	rep := Report{Dataset: "files", Split: "test", Epoch: 1, Tasks: []engine.TaskScores{{Task: "a", Ensemble: class}, {Task: "b", Ensemble: class}}}
	full := errors.New("no space left on device")
	calls := 0
	writeFile = func(path string, perm fs.FileMode, write func(io.Writer) error) error {
		if calls++; calls == 2 {
			return full
		}
		return os.WriteFile(path, []byte("png"), perm)
	}
	root := t.TempDir()
	made := filepath.Join(root, "new", "plots")
	if err := writeDiagrams(made, rep); !errors.Is(err, full) || !strings.Contains(err.Error(), "-reliability "+made) {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory eval made is still there: %v", err)
	}
	kept := filepath.Join(root, "kept")
	os.Mkdir(kept, 0o755)
	os.WriteFile(filepath.Join(kept, "mine.txt"), []byte("mine"), 0o644)
	calls = 0
	if err := writeDiagrams(kept, rep); !errors.Is(err, full) {
		t.Errorf("error %v", err)
	}
	entries, _ := os.ReadDir(kept)
	if len(entries) != 1 || entries[0].Name() != "mine.txt" {
		t.Errorf("%s holds %v after the failure, want mine.txt alone", kept, entries)
	}
}
