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
