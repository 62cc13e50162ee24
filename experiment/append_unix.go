//go:build unix

package experiment

import "syscall"

// noFollow keeps an append to metrics.jsonl from following a symlink put
// there after the file was checked.
const noFollow = syscall.O_NOFOLLOW
