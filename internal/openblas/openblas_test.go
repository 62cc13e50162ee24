//go:build openblas

package openblas

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The kernels OpenBLAS runs are at least as wide as this processor's
// AVX2: on one it does not recognise, init chose them again.
func TestKernelsFitTheProcessor(t *testing.T) {
	if v, set := os.LookupEnv("OPENBLAS_CORETYPE"); set {
		t.Skipf("OPENBLAS_CORETYPE=%s chose the kernels", v)
	}
	t.Logf("OpenBLAS runs its %s kernels", Core())
	if thisCPU().avx2FMA && !wideCores[Core()] {
		t.Errorf("OpenBLAS runs its %s kernels on a processor with AVX2 and FMA", Core())
	}
}

// A user's OPENBLAS_CORETYPE stands, even where it names kernels
// narrower than the processor's. The test binary runs itself with it
// set and prints the kernels it got.
func TestUserCoreTypeKept(t *testing.T) {
	if os.Getenv("OPENBLAS_CORE_PRINT") != "" {
		os.Stdout.WriteString("core=" + Core() + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUserCoreTypeKept$", "-test.v")
	cmd.Env = append(os.Environ(), "OPENBLAS_CORE_PRINT=1", "OPENBLAS_CORETYPE=Prescott")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "core=Prescott\n") {
		t.Errorf("with OPENBLAS_CORETYPE=Prescott the child printed %q, want core=Prescott", out)
	}
}
