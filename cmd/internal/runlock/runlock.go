// Package runlock makes a run directory belong to one process at a time:
// two processes writing one directory's checkpoints would interleave them
// and remove each other's temporary files.
//
// Acquire takes an exclusive flock(2) on DIR/.lock and writes the holder's
// PID into it. The kernel releases the lock when the holder exits, however
// it exits, so a stale lock file left by a killed process does not block
// the next one; its PID is merely overwritten. Where flock is not
// available (Windows, Solaris, AIX) Acquire only records the PID and
// excludes no one.
package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/internal/regfile"
)

// Name is the lock file's name in a run directory.
const Name = ".lock"

// ErrHeld is wrapped by Acquire's error when another process holds the
// directory.
var ErrHeld = errors.New("run directory in use")

// Lock is a held lock on a run directory.
type Lock struct {
	f *os.File
}

// Acquire locks the existing directory dir for this process, failing at
// once (without waiting) if another holds it: the error wraps ErrHeld and
// names the holder's PID as its lock file records it.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, Name)
	// Not O_TRUNC: the file may hold a running holder's PID, which the
	// error message reports.
	if isLink(path) {
		return nil, fmt.Errorf("locking run directory %s: %s is a symbolic link, not a lock file; remove it", dir, path)
	}
	// Not following a symlink, and not blocking on a pipe: the PID
	// written below would otherwise land in whatever the link names.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|openFlags, 0o644)
	if err != nil {
		if isLink(path) {
			return nil, fmt.Errorf("locking run directory %s: %s is a symbolic link, not a lock file; remove it", dir, path)
		}
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	if err := checkFile(f, path); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	if err := lock(f); err != nil {
		holder := "another process"
		if pid := readPID(f); pid > 0 {
			holder = fmt.Sprintf("process %d", pid)
		}
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w: %s is being written by %s (lock file %s); wait for it to end, or use another directory",
				ErrHeld, dir, holder, path)
		}
		return nil, fmt.Errorf("locking run directory %s: %w", dir, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	// Write, then cut: a reader never sees an empty file, at worst a
	// longer earlier PID's tail after the first line.
	if _, err := f.WriteAt(pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Truncate(int64(len(pid))); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Release unlocks the directory. The lock file stays: removing it could
// let two later processes lock two different files of the same name.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}

// Hold is Acquire for a command that holds the lock until it returns: it
// gives back a release function to defer, which passes a failed release to
// report (a warning: the kernel drops the lock at exit anyway).
func Hold(dir string, report func(error)) (release func(), err error) {
	l, err := Acquire(dir)
	if err != nil {
		return nil, err
	}
	return func() {
		if err := l.Release(); err != nil {
			report(err)
		}
	}, nil
}

// Holder reports whether a process holds the run directory dir (a train
// writing its checkpoints), and its PID as the lock file records it (0
// where it records none), without taking or creating the lock: a reader
// (eval) says who is writing what it could not read.
func Holder(dir string) (pid int, held bool) {
	f, err := os.OpenFile(filepath.Join(dir, Name), os.O_RDONLY|openFlags, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if checkFile(f, f.Name()) != nil || !probe(f) {
		return 0, false
	}
	return readPID(f), true
}

// isLink tells whether path is a symbolic link.
func isLink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}

// checkFile refuses a lock file that is not a regular file of its own: a
// device, a pipe or a directory, or a hard link to another file, which
// writing the PID would overwrite.
func checkFile(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file but %s; remove it", path, regfile.Kind(st.Mode()))
	}
	if n := links(st); n > 1 {
		return fmt.Errorf("%s has %d hard links: writing the PID would change the other names' file; remove it", path, n)
	}
	return nil
}

// readPID returns the PID on the lock file's first line, or 0.
func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0
	}
	return pid
}
