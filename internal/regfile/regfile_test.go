//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Only regular files open, through symlinks too; a pipe is refused at
// once rather than blocking, a device and a directory by what they are.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want string // "" for success
	}{
		{file, ""},
		{link, ""},
		{zero, "not a regular file but a character device"},
		{fifo, "not a regular file but a named pipe"},
		{dir, "not a regular file but a directory"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				f, st, err := Open(tc.path)
				if err == nil {
					if st.Size() != 4 {
						t.Errorf("size %d, want 4", st.Size())
					}
					f.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Open blocked")
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path)):
				t.Fatalf("error %v, want one naming %s and saying %q", err, tc.path, tc.want)
			case errors.Is(err, ErrNotRegular) != strings.HasPrefix(tc.want, "not a regular file"):
				t.Fatalf("error %v: errors.Is ErrNotRegular %v", err, errors.Is(err, ErrNotRegular))
			}
		})
	}
}
