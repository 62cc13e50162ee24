//go:build unix

package mat5

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe or a symlink to /dev/zero in place of a MAT-file is refused
// at once, by name; an element whose tag promises more than the machine's
// memory is refused before it is read.
func TestHostileFiles(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "doubles.mat"))
	if err != nil {
		t.Fatal(err)
	}
	huge := append([]byte{}, good[:128]...)
	huge = binary.LittleEndian.AppendUint32(huge, miMATRIX)
	huge = binary.LittleEndian.AppendUint32(huge, 1<<30)
	for _, tc := range []struct {
		name string
		make func(string) error
		want string
	}{
		{"named pipe", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file but a named pipe"},
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "not a regular file but a character device"},
		{"element over memory", func(p string) error { return os.WriteFile(p, huge, 0o644) },
			"variable 1: element of 1.0 GiB is more than a quarter of this machine's memory (64 MiB, $MTSGD_MEMORY)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MTSGD_MEMORY", "64M")
			path := filepath.Join(t.TempDir(), "x.mat")
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := ReadFile(path); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and saying %q", err, path, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("ReadFile blocked")
			}
		})
	}
}
