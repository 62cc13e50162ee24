//go:build unix

package runlock

import (
	"os"
	"syscall"
)

// openFlags make the open refuse a symlink (ELOOP) and not wait for a
// writer of a named pipe.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// links is the file's number of hard links.
func links(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}
