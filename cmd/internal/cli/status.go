package cli

import (
	"context"
	"errors"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/experiment"
)

// Exit statuses, the same for every command. docs/what-can-go-wrong.md
// lists them with what to do about each.
const (
	// ExitOK: done.
	ExitOK = 0
	// ExitError: an error not of the kinds below: a refused or locked
	// run directory, missing data, data changed since the checkpoint, a
	// damaged checkpoint, a failed save or write.
	ExitError = 1
	// ExitUsage: a bad command line or bad input, found before any
	// result was written: a flag, a run too big for this machine's
	// memory, a data file that is malformed or does not fit the model.
	ExitUsage = 2
	// ExitInterrupted: stopped by SIGINT or SIGTERM. A training run has
	// saved its state for -resume (compare: rerun to continue); eval and
	// predict wrote nothing.
	ExitInterrupted = 3
	// ExitUnsaved: stopped by a signal, and saving the state failed; the
	// message names the last good checkpoint.
	ExitUnsaved = 4
	// ExitIncomplete: compare -aggregate found cells of the plan still
	// to run; it tabulated those that finished.
	ExitIncomplete = 5
	// ExitDiverged: a NaN or Inf in the parameters, losses or scores:
	// training stopped there, or eval's checkpoint holds one (its report
	// is still written).
	ExitDiverged = 6
)

// UsageError marks a bad command line or bad input found after the flags
// were read (once the data loaded, say): status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage marks err as a usage error (status 2); nil stays nil.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{err}
}

// ErrIncomplete is wrapped by an error that leaves part of the work to
// a later run: status 5.
var ErrIncomplete = errors.New("incomplete")

// Status is the exit status for a command's error.
func Status(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, experiment.ErrUnsaved):
		return ExitUnsaved
	case errors.Is(err, experiment.ErrInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, ErrIncomplete):
		return ExitIncomplete
	case errors.Is(err, experiment.ErrDiverged):
		return ExitDiverged
	case errors.As(err, new(UsageError)), errors.Is(err, data.ErrInvalid), errors.Is(err, experiment.ErrUnfit):
		return ExitUsage
	}
	return ExitError
}

// Marked is an error with message msg that errors.Is also reports as
// kind: a command's own sentinel error with one of the statuses above
// (Marked("...", context.Canceled) is an interruption, status 3).
func Marked(msg string, kind error) error { return marked{msg, kind} }

type marked struct {
	msg  string
	kind error
}

func (m marked) Error() string        { return m.msg }
func (m marked) Is(target error) bool { return target == m.kind }
