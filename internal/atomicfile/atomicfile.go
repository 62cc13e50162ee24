// Package atomicfile writes files so that a reader sees either the old
// content or the complete new content, never a partial write: the data goes
// to a temporary file in the same directory, is fsynced, and is renamed over
// the target, and the directory is fsynced so the rename survives a crash.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces the file at path with what write produces, with permission
// bits perm. If write or any step fails, the file at path is left as it was
// and the temporary file is removed.
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	p, err := Prepare(path, perm, write)
	if err != nil {
		return err
	}
	return p.Commit()
}

// Pending is a file written in full, and synced, to a temporary file
// beside its path, not yet in place: several files can then be put in
// place only once all of them were written.
type Pending struct {
	path, tmp string
}

// Prepare writes what write produces to a temporary file in path's
// directory, with permission bits perm, and syncs it; Commit puts it in
// place, Abort removes it. If any step fails, nothing is left behind.
func Prepare(path string, perm os.FileMode, write func(io.Writer) error) (_ *Pending, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("writing %s: sync: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("writing %s: close: %w", path, err)
	}
	return &Pending{path: path, tmp: tmp.Name()}, nil
}

// Commit renames the temporary file over the path and syncs the
// directory, so that the rename survives a crash. On a failed rename the
// temporary file is removed.
func (p *Pending) Commit() error {
	if p.tmp == "" {
		return fmt.Errorf("writing %s: already committed or aborted", p.path)
	}
	tmp := p.tmp
	p.tmp = ""
	if err := os.Rename(tmp, p.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", p.path, err)
	}
	d, err := os.Open(filepath.Dir(p.path))
	if err != nil {
		return fmt.Errorf("writing %s: open directory for sync: %w", p.path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("writing %s: sync directory: %w", p.path, err)
	}
	return nil
}

// Abort removes the temporary file of a file not committed; after Commit
// it does nothing.
func (p *Pending) Abort() {
	if p.tmp != "" {
		os.Remove(p.tmp)
		p.tmp = ""
	}
}
