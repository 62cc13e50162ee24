package cli

import (
	"fmt"
	"os"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/runlock"
)

// LockRun takes the lock on the run directory dir for this process
// (package runlock: a second process on dir fails at once, naming the
// holder), creating dir when create is set; without create, a missing dir
// is an error saying there is no run. release gives the lock back.
func LockRun(dir string, create bool) (release func(), err error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating output directory: %w", err)
		}
	} else if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("no run to resume: %w", err)
	}
	return runlock.Hold(dir, func(err error) { log.Warn(err) })
}
