package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
)

// -device takes cpu or cuda; in a build without -tags gpu, cuda is a
// command-line error (status 2) saying how to build one, before any plan
// is written or data loaded.
func TestDeviceFlag(t *testing.T) {
	args := []string{"-dataset", "multi-mnist", "-out", t.TempDir()}
	if _, err := parseFlags(append(args, "-device", "tpu"), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-device must be cpu or cuda") {
		t.Errorf("-device tpu: error %v", err)
	}
	o, err := parseFlags(append(args, "-device", "cuda"), &bytes.Buffer{})
	switch {
	case cuda.CheckName("cuda") == nil: // a gpu build
		if err != nil || o.Device != "cuda" || o.Slurm.Device != "cuda" {
			t.Errorf("-device cuda in a gpu build: %+v, %v", o, err)
		}
	case !errors.Is(err, cuda.ErrNotBuilt):
		t.Errorf("-device cuda without the build: error %v, want one wrapping cuda.ErrNotBuilt", err)
	}
}

// With -device cuda each task of the Slurm job array asks for a GPU and
// runs its cell on it; without, neither.
func TestSbatchDevice(t *testing.T) {
	p := plan.Plan{Comparison: plan.Comparison{Dataset: "multi-mnist"}, Cells: []plan.Cell{{}, {}}}
	for _, device := range []string{"cpu", "cuda"} {
		s := SlurmOptions{CPUs: 2, Mem: "8G", Time: "1:00:00", Device: device}
		script := sbatchScript(p, s, "/bin/compare", "/sweep", "")
		gres, flag := strings.Contains(script, "#SBATCH --gres=gpu:1\n"), strings.Contains(script, " -device cuda")
		if want := device == "cuda"; gres != want || flag != want {
			t.Errorf("-device %s: --gres=gpu:1 %v, -device cuda %v; want both %v\n%s", device, gres, flag, want, script)
		}
	}
}
