package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	for _, content := range []string{"first", "second, longer"} {
		err := Write(path, 0o640, func(w io.Writer) error {
			_, err := io.WriteString(w, content)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
			t.Fatalf("mode %v, %v; want 0640", fi.Mode(), err)
		}
	}
}

// A failing writer leaves the old file intact and no temporary file behind.
func TestWriteFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := Write(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half of the new")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want it to wrap %v", err, boom)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Errorf("file now holds %q, want the old content", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(entries))
	}
}

func TestWriteMissingDirectory(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "no", "such", "f"), 0o644, func(io.Writer) error { return nil })
	if err == nil {
		t.Fatal("no error for a missing directory")
	}
}

// A prepared file is not in place until Commit, and Abort leaves the old
// file and no temporary behind; Abort after Commit changes nothing.
func TestPrepare(t *testing.T) {
	for _, commit := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Prepare(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != "old" {
			t.Fatalf("prepared but not committed: file holds %q", got)
		}
		want := "old"
		if commit {
			if err := p.Commit(); err != nil {
				t.Fatal(err)
			}
			want = "new"
			if err := p.Commit(); err == nil {
				t.Error("a second Commit succeeded")
			}
		}
		p.Abort()
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("commit %v: file holds %q, want %q", commit, got, want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("commit %v: directory holds %d entries, want only the file", commit, len(entries))
		}
	}
}
