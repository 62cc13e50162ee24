//go:build unix

package runlock

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A lock file that is not a regular file of its own is refused, and what
// it points to is left as it was: a symlink (to a file, or dangling), a
// hard link, a named pipe (without blocking), a directory.
func TestRefusesOtherFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(lock, victim string) error
		want string
	}{
		{"symlink to a file", func(l, v string) error { return os.Symlink(v, l) }, "is a symbolic link, not a lock file"},
		{"dangling symlink", func(l, v string) error { return os.Symlink(v+".new", l) }, "is a symbolic link, not a lock file"},
		{"hard link", func(l, v string) error { return os.Link(v, l) }, "has 2 hard links"},
		{"named pipe", func(l, _ string) error { return syscall.Mkfifo(l, 0o644) }, "not a regular file but a named pipe"},
		{"directory", func(l, _ string) error { return os.Mkdir(l, 0o755) }, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, other := t.TempDir(), t.TempDir()
			victim := filepath.Join(other, "V")
			if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(filepath.Join(dir, Name), victim); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				l, err := Acquire(dir)
				l.Release()
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
					t.Errorf("error %v, want one naming %s and saying %q", err, dir, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Acquire blocked")
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
				t.Errorf("%s now holds %q", victim, b)
			}
			if _, err := os.Stat(victim + ".new"); err == nil {
				t.Errorf("the dangling link's target was created")
			}
		})
	}
}
