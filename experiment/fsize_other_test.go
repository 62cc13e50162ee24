//go:build !linux

package experiment

import "testing"

func limitFileSize(t *testing.T, _ uint64) func() {
	t.Skip("limits the file size with RLIMIT_FSIZE, here only on Linux")
	return nil
}
