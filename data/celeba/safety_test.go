//go:build unix

package celeba

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The text files must be regular files: a named pipe is refused at once
// rather than blocking, a symlink to /dev/zero before it is read; a count
// that the file cannot hold, and rows past the count, are refused.
func TestHostileFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		hurt func(dir string) error
		want string
	}{
		{"attributes a named pipe", func(dir string) error {
			os.Remove(filepath.Join(dir, AttributeFile))
			return syscall.Mkfifo(filepath.Join(dir, AttributeFile), 0o644)
		}, "list_attr_celeba.txt: not a regular file but a named pipe"},
		{"partition a symlink to /dev/zero", func(dir string) error {
			os.Remove(filepath.Join(dir, PartitionFile))
			return os.Symlink("/dev/zero", filepath.Join(dir, PartitionFile))
		}, "list_eval_partition.txt: not a regular file but a character device"},
		{"image a named pipe", func(dir string) error {
			p := filepath.Join(dir, ImageDir, "000004.jpg")
			os.Remove(p)
			return syscall.Mkfifo(p, 0o644)
		}, "000004.jpg: not a regular file but a named pipe"},
		{"count past the file's size", func(dir string) error {
			return editAttributes(dir, func(lines []string) []string { lines[0] = "2000000000"; return lines })
		}, "line 1 says 2000000000 images, more than a file of"},
		{"rows past the count", func(dir string) error {
			return editAttributes(dir, func(lines []string) []string { lines[0] = "5"; return lines })
		}, "list_attr_celeba.txt: line 8: more images than the 5 line 1 says"},
		{"JPEG declaring 60000×60000", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, ImageDir, "000003.jpg"), hugeJPEG(60000, 60000), 0o644)
		}, "000003.jpg: a JPEG of 60000×60000 pixels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture(t, 30, nil)
			if err := tc.hurt(filepath.Join(root, Subdir)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := Load(root, Options{Tasks: "10", Workers: 1}); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one saying %q", err, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Load blocked")
			}
		})
	}
}

func editAttributes(dir string, edit func([]string) []string) error {
	p := filepath.Join(dir, AttributeFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	lines := edit(strings.Split(string(b), "\n"))
	return os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
}

// hugeJPEG is the start of a baseline JPEG whose frame header declares
// w×h pixels: enough for DecodeConfig, and for a decoder that trusted it
// to allocate w·h bytes per component.
func hugeJPEG(w, h int) []byte {
	b := []byte{0xff, 0xd8} // SOI
	// APP0 JFIF: with it the decoder's configuration ends at the frame.
	b = append(b, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0)
	// DQT: one table of 64 ones.
	b = append(b, 0xff, 0xdb, 0, 67, 0)
	for range 64 {
		b = append(b, 1)
	}
	// SOF0: 8 bits, h, w, one component.
	b = append(b, 0xff, 0xc0, 0, 11, 8, byte(h>>8), byte(h), byte(w>>8), byte(w), 1, 1, 0x11, 0)
	return b
}
