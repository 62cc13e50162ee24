package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// train -resume on a run whose last/ was tampered with ends with an error
// saying what is wrong, status 1 (the checkpoint is at fault, not the
// command line), never a panic, an out-of-memory crash or an endless
// read (testenv.Tamperings).
func TestResumeTamperedCheckpoint(t *testing.T) {
	requireData(t)
	t.Setenv(sysmem.Env, "24G")
	captureLog(t)
	out := t.TempDir()
	o, err := parseFlags(strings.Fields(tiny+" -progress=false -epochs 1 -train-limit 32 -out "+out), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, tc := range testenv.Tamperings() {
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			testenv.CopyDir(t, filepath.Join(out, "last"), filepath.Join(dir, "last"))
			tc.Damage(t, filepath.Join(dir, "last"))
			o, err := parseFlags([]string{"-resume", dir, "-epochs", "2", "-progress=false"}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.Want) {
				t.Fatalf("error %v, want one saying %q", err, tc.Want)
			}
			if status := cli.Status(err); status != cli.ExitError {
				t.Errorf("status %d, want %d", status, cli.ExitError)
			}
		})
	}
}
