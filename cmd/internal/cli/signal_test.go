//go:build unix

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"
)

// SIGINT while Run works cancels its context, and the cancellation is
// status 3; the signal does not kill the process.
func TestExecSignal(t *testing.T) {
	captureLog(t)
	cmd := testCommand(func(ctx context.Context, _ testOptions) error {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped: %w", ctx.Err())
		case <-time.After(10 * time.Second):
			return errors.New("SIGINT did not cancel the context")
		}
	}, nil)
	if got := cmd.Exec(nil, io.Discard); got != ExitInterrupted {
		t.Errorf("status %d, want %d", got, ExitInterrupted)
	}
}
