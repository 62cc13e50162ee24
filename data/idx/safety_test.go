//go:build unix

package idx

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What is not a regular IDX file of the size its header promises is
// refused by name before its data is read: a symlink to /dev/zero and a
// named pipe (without blocking), a sparse file far longer than promised,
// a gzip bomb whose stream runs on past the promise, and a promise larger
// than the machine's memory.
func TestHostileFiles(t *testing.T) {
	im, _ := fixture()
	good := encode(t, func(b *bytes.Buffer) error { return WriteImages(b, im) })
	// The header of 60,000 images of 28×28 (47 MB) and no more.
	big := bytes.Clone(good[:16])
	copy(big[4:], []byte{0, 0, 0xea, 0x60, 0, 0, 0, 28, 0, 0, 0, 28})
	for _, tc := range []struct {
		name   string
		make   func(path string) error
		memory string // $MTSGD_MEMORY, if set
		want   string
	}{
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "",
			"not a regular file but a character device"},
		{"named pipe", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "", "not a regular file but a named pipe"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "", "not a regular file but a directory"},
		{"sparse 1 GiB", func(p string) error {
			if err := os.WriteFile(p, good, 0o644); err != nil {
				return err
			}
			return os.Truncate(p, 1<<30)
		}, "", "1073741748 bytes after the 3 images of 4×5"},
		{"gzip bomb", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
			zw.Write(good)
			zero := make([]byte, 1<<20)
			for range 256 { // 256 MiB of zeros after the 60 bytes promised
				if _, err := zw.Write(zero); err != nil {
					return err
				}
			}
			return zw.Close()
		}, "", "gzip: more data than the 3 images of 4×5 (60 bytes) the header promises"},
		{"promise over memory", func(p string) error { return os.WriteFile(p, gz(t, big), 0o644) }, "8M",
			"the header promises 60000 images of 28×28 (45 MiB of data), more than half of this machine's memory (8 MiB, $MTSGD_MEMORY)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.memory != "" {
				t.Setenv("MTSGD_MEMORY", tc.memory)
			}
			path := filepath.Join(t.TempDir(), "images")
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := ReadImages(path); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and saying %q", err, path, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("ReadImages blocked")
			}
		})
	}
}
