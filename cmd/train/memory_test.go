package main

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// A run too big for the machine (taken to have 24 GiB) is refused with
// status 2 and a message naming the flag and the estimate, before it
// allocates: train runs with 4 GiB of address space (ulimit -v), so that
// one that began to allocate the 64 GiB and more these runs ask for would
// die of Go's fatal out-of-memory error instead. Toy problems are refused
// as the flags are parsed, networks once their data has loaded.
func TestRefusesRunsTooBig(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("limits the address space with the shell's ulimit -v")
	}
	t.Setenv(sysmem.Env, "24G")
	for _, tc := range []struct {
		args string
		want []string
	}{
		{"-dataset mog3 -particles 100000", []string{"-particles 100000: the run needs at least ", "kernel matrices", "lower -particles"}},
		{"-dataset multi-mnist -workers 2 -batch 100000", []string{"-batch 100000: the run needs at least ", "graphs of 2 workers", "lower -batch"}},
		{"-dataset multi-mnist -workers 2 -particles 100000", []string{"-particles 100000: the run needs at least ", "kernel matrices", "lower -particles"}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			if isNetwork(strings.Fields(tc.args)[1]) {
				requireData(t)
			}
			cmd := exec.Command("/bin/sh", "-c", `ulimit -v 4194304 && exec "$0" -test.run='^$'`, os.Args[0])
			cmd.Env = append(os.Environ(), asMainEnv+"="+tc.args+" -progress=false -out "+t.TempDir())
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != cli.ExitUsage {
				t.Fatalf("train exited with %v, want status %d; output:\n%s", err, cli.ExitUsage, out)
			}
			for _, want := range append(tc.want, "more than the 24.0 GiB this machine has ($MTSGD_MEMORY)") {
				if !strings.Contains(string(out), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
