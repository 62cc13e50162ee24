//go:build unix && !solaris && !aix

package runlock

import (
	"errors"
	"os"
	"syscall"
)

// Exclusive tells whether Acquire keeps other processes out here.
const Exclusive = true

var errWouldBlock = syscall.EWOULDBLOCK

// lock takes an exclusive flock on f without waiting.
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// probe reports whether another open file holds a lock on f, trying a
// shared lock without waiting and dropping it at once.
func probe(f *os.File) bool {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err == nil:
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return false
		}
		return errors.Is(err, errWouldBlock)
	}
}
