package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
)

// -ood names are checked with the flags, before anything loads: an
// unknown one, or files (never offered: -ood has no way to name its
// directory), is a bad command line. On a run on your own files, any
// -ood is refused with status 2 from the checkpoint's settings, before
// the data load: with no MNIST in -data-dir, a load would fail on it.
func TestOODCheckedFirst(t *testing.T) {
	for _, name := range []string{"nosuch", files.Name} {
		_, err := parseFlags([]string{"-ckpt", "runs/x", "-ood", name}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), `-ood "`+name+`" is not one of multi-mnist,`) || strings.Contains(err.Error(), "files") != (name == files.Name) {
			t.Errorf("-ood %s: %v", name, err)
		}
	}
	dir := t.TempDir()
	writeLabelled(t, dir, 60, false)
	s := experiment.Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Particles, s.Epochs, s.Batch, s.Hidden = 2, 1, 16, "8"
	out, _ := trainSmall(t, s, "")
	o, err := parseFlags([]string{"-ckpt", out, "-ood", "multi-mnist", "-data-dir", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), o, &bytes.Buffer{})
	if cli.Status(err) != cli.ExitUsage || !strings.Contains(err.Error(), "-ood multi-mnist: the run is on your own files") {
		t.Errorf("status %d, error %v", cli.Status(err), err)
	}
}
