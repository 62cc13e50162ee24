package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// eval -ckpt on a tampered checkpoint of a real run ends with an error
// saying what is wrong (status 1), never a panic, an out-of-memory crash
// or an endless read (testenv.Tamperings).
func TestTamperedCheckpoint(t *testing.T) {
	t.Setenv(sysmem.Env, "24G")
	s := experiment.Defaults("multi-mnist")
	s.Particles, s.Epochs, s.Batch, s.LR, s.TrainLimit, s.TestLimit = 2, 1, 32, 0.01, 96, 40
	out, _ := trainSmall(t, s, "")
	for _, tc := range testenv.Tamperings() {
		t.Run(tc.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "last")
			testenv.CopyDir(t, filepath.Join(out, "last"), dir)
			tc.Damage(t, dir)
			o, err := parseFlags([]string{"-ckpt", dir}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.Want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %v, want one naming %s and saying %q", err, dir, tc.Want)
			}
		})
	}
}
