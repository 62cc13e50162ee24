//go:build !unix

package runlock

import "os"

// openFlags is 0 where package syscall has no O_NOFOLLOW (Windows): the
// lock file's symlink check is then the Lstat before the open.
const openFlags = 0

// links is 1: the system does not say.
func links(os.FileInfo) uint64 { return 1 }
