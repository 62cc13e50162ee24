//go:build linux

package experiment

import (
	"syscall"
	"testing"
)

// limitFileSize makes every write past n bytes of a file fail with "file
// too large", as a full disk fails it, for root too, until restore is
// called or the test ends. Go ignores the SIGXFSZ that comes with it.
func limitFileSize(t *testing.T, n uint64) (restore func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	restore = func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(restore)
	return restore
}
