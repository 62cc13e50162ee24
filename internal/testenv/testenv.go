// Package testenv decides what a test does when the real data it needs is
// not on the machine: skip on a developer's machine, fail in CI, where
// .ci/run installs the data and sets $MTSGD_REQUIRE_DATA so that a broken
// install cannot pass as skipped tests.
package testenv

import (
	"errors"
	"os"
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
