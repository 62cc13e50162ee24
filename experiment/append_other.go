//go:build !unix

package experiment

// noFollow is 0 where package syscall has no O_NOFOLLOW (Windows): the
// Lstat before the open is the only check.
const noFollow = 0
