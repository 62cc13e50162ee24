//go:build unix

package regfile

import "syscall"

// nonblock makes opening a named pipe or a device return at once; it does
// not change how a regular file reads.
const nonblock = syscall.O_NONBLOCK
