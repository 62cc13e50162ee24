//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// predict on a full disk (every write past 512 bytes of a file failing
// with "file too large", as a full disk fails it, for root too) names the
// output it was writing, not its temporary column files, exits with
// status 1, and leaves neither the output nor its temporary folder. The
// limit holds for the whole process: the test runs in a child process of
// its own (testenv.InChild).
func TestFullDiskNamesOutput(t *testing.T) {
	if !testenv.InChild(t) {
		return
	}
	dir, runDir := trained(t)
	out := t.TempDir()
	pred := filepath.Join(out, "pred.csv")
	o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, files.TestFile), "-out", pred, "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 512, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), o)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if cli.Status(err) != cli.ExitError || err == nil || !strings.HasPrefix(err.Error(), "writing "+pred+": ") || !strings.Contains(err.Error(), "file too large") {
		t.Errorf("status %d, error %v; want 1 and writing %s: … file too large", cli.Status(err), err, pred)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("left in %s: %v", out, entries)
	}
}
