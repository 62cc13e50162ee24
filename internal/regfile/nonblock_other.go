//go:build !unix

package regfile

// nonblock is 0 where package syscall has no O_NONBLOCK (Windows): there
// named pipes live outside the file system's paths.
const nonblock = 0
