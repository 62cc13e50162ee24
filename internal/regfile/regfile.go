// Package regfile opens data files for reading only when they are regular
// files, and without blocking. A symlink to /dev/zero would be read until
// memory runs out, a named pipe would block the open until a writer came
// (with SIGINT and SIGTERM waiting behind it), and a directory cannot be
// read. Symlinks to regular files are followed: data directories are
// often links into shared storage.
package regfile

import (
	"errors"
	"fmt"
	"os"
)

// Open opens path for reading if it is a regular file, directly or
// through symlinks, and returns it with its information. The open itself
// cannot block (O_NONBLOCK where the system has it); what was opened is
// then checked, so a file swapped in between is judged too.
func Open(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = notRegular{path, Kind(st.Mode())}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ErrNotRegular is what Open's error for a file that is not regular
// wraps, so that a loader can call it bad input.
var ErrNotRegular = errors.New("not a regular file")

// notRegular is Open's error for a file that is not regular.
type notRegular struct{ path, kind string }

func (e notRegular) Error() string {
	return fmt.Sprintf("%s: not a regular file but %s", e.path, e.kind)
}
func (e notRegular) Is(target error) bool { return target == ErrNotRegular }

// Kind names what a file that is not regular is.
func Kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
