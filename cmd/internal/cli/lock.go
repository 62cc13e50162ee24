package cli

import (
	"fmt"
	"os"
	"path/filepath"

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

// FirstMissing is the outermost directory of path that does not exist
// (what os.MkdirAll(path) would create first), "" where path exists.
func FirstMissing(path string) string {
	missing := ""
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			return missing
		}
		missing = p
		if filepath.Dir(p) == p {
			return missing
		}
	}
}

// LockNewRun is LockRun(dir, true) for a command that starts a run in
// dir: unlock, given the command's error, gives the lock back, and where
// the command failed leaving nothing in a dir it created but the lock
// file, removes what it created, so that a refused run leaves no
// directory behind.
func LockNewRun(dir string) (unlock func(error), err error) {
	created := FirstMissing(dir)
	release, err := LockRun(dir, true)
	if err != nil {
		removeCreated(dir, created)
		return nil, err
	}
	return func(runErr error) {
		if runErr != nil && created != "" {
			entries, err := os.ReadDir(dir)
			if err == nil && len(entries) == 1 && entries[0].Name() == runlock.Name {
				// Unlinked while still held: no other process can have
				// taken it in between.
				os.Remove(filepath.Join(dir, runlock.Name))
				removeCreated(dir, created)
			}
		}
		release()
	}, nil
}

// removeCreated removes the empty directories from dir up to created,
// those a MkdirAll of dir made; "" removes none.
func removeCreated(dir, created string) {
	if created == "" {
		return
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if os.Remove(d) != nil || d == created || filepath.Dir(d) == d {
			return
		}
	}
}
