// Package testenv decides what a test does when the real data (or the
// tools that write its fixtures) it needs is not on the machine: skip on a
// developer's machine, fail in CI, where .ci/run installs them and sets
// $MTSGD_REQUIRE_DATA so that a broken install cannot pass as skipped
// tests.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mtsgd/mtsgd/data"
)

// RequireDataEnv, when set to any non-empty value, turns missing real data
// into a test failure.
const RequireDataEnv = "MTSGD_REQUIRE_DATA"

// CheckData ends the test if err, the result of loading real data, is not
// nil: a skip when the files are missing and $MTSGD_REQUIRE_DATA is unset,
// a failure otherwise.
func CheckData(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, data.ErrMissing) && os.Getenv(RequireDataEnv) == "" {
		t.Skipf("real data not installed (run scripts/fetch-data): %v", err)
	}
	t.Fatal(err)
}

// SarcosFixture writes the SARCOS-shaped fixture of
// data/sarcos/testdata/make_fixture.py (44,484 + 4,449 rows through
// scipy.io.savemat) into a temporary directory and returns that directory,
// to use as a data directory. It needs /usr/bin/python3 with scipy (Debian:
// python3-scipy, which .ci/run installs); without them the test skips, or
// fails when $MTSGD_REQUIRE_DATA is set.
func SarcosFixture(t testing.TB) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "data", "sarcos", "testdata", "make_fixture.py")
	dir := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", script, dir).CombinedOutput()
	if err != nil {
		CheckData(t, fmt.Errorf("%w: python3 with scipy writes the SARCOS fixture: %v: %s", data.ErrMissing, err, out))
	}
	return dir
}
