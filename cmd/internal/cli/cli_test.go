package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/experiment"
)

// Each kind of error has its one status, however deeply it is wrapped.
func TestStatus(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("cell 3: %w", fmt.Errorf("epoch 2: %w", err)) }
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("disk full"), ExitError},
		{Usage(errors.New("-batch 0")), ExitUsage},
		{wrap(Usage(errors.New("-cell 9"))), ExitUsage},
		{wrap(data.ErrInvalid), ExitUsage},
		{wrap(experiment.ErrUnfit), ExitUsage},
		{wrap(experiment.ErrInterrupted), ExitInterrupted},
		{wrap(context.Canceled), ExitInterrupted},
		{Marked("interrupted while loading", context.Canceled), ExitInterrupted},
		// Unsaved is an interruption whose save failed: 4, not 3.
		{wrap(errors.Join(experiment.ErrUnsaved, experiment.ErrInterrupted)), ExitUnsaved},
		{Marked("cells missing", ErrIncomplete), ExitIncomplete},
		{wrap(experiment.ErrDiverged), ExitDiverged},
	} {
		if got := Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if Usage(nil) != nil {
		t.Error("Usage(nil) is not nil")
	}
}

// The statuses are distinct: one meaning each.
func TestStatusesDistinct(t *testing.T) {
	seen := map[int]bool{}
	for _, s := range []int{ExitOK, ExitError, ExitUsage, ExitInterrupted, ExitUnsaved, ExitIncomplete, ExitDiverged} {
		if seen[s] {
			t.Errorf("status %d has two meanings", s)
		}
		seen[s] = true
	}
}

type testOptions struct{ N int }

func testCommand(run func(context.Context, testOptions) error, explain func(testOptions, error) bool) Command[testOptions] {
	return Command[testOptions]{
		Name: "test",
		Parse: func(args []string, stderr io.Writer) (testOptions, error) {
			var o testOptions
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(stderr)
			fs.IntVar(&o.N, "n", 1, "a number")
			if err := fs.Parse(args); err != nil {
				return o, err
			}
			if o.N < 0 {
				return o, fmt.Errorf("-n must be 0 or positive, got %d", o.N)
			}
			return o, nil
		},
		Run:     run,
		Explain: explain,
	}
}

func captureLog(t *testing.T) *bytes.Buffer {
	var b bytes.Buffer
	out := log.StandardLogger().Out
	log.SetOutput(&b)
	t.Cleanup(func() { log.SetOutput(out) })
	return &b
}

// A bad command line is "NAME: what" on stderr and status 2, before Run;
// -h is status 0; Run's error is logged, or explained, and decides the
// status.
func TestExec(t *testing.T) {
	logged := captureLog(t)
	ran := false
	failing := testCommand(func(_ context.Context, o testOptions) error {
		ran = true
		if o.N == 7 {
			return Marked("cells missing", ErrIncomplete)
		}
		return errors.New("the disk is full")
	}, func(_ testOptions, err error) bool {
		if errors.Is(err, ErrIncomplete) {
			log.Warn("explained: " + err.Error())
			return true
		}
		return false
	})

	var stderr bytes.Buffer
	if got := failing.Exec([]string{"-n", "-3"}, &stderr); got != ExitUsage || ran || stderr.String() != "test: -n must be 0 or positive, got -3\n" {
		t.Errorf("bad flag: status %d, ran %v, stderr %q", got, ran, stderr.String())
	}
	stderr.Reset()
	if got := failing.Exec([]string{"-h"}, &stderr); got != ExitOK || ran || !strings.Contains(stderr.String(), "a number") {
		t.Errorf("-h: status %d, ran %v, stderr %q", got, ran, stderr.String())
	}
	if got := failing.Exec(nil, io.Discard); got != ExitError || !ran || !strings.Contains(logged.String(), "level=error msg=\"the disk is full\"") {
		t.Errorf("failing run: status %d, ran %v, log %q", got, ran, logged.String())
	}
	logged.Reset()
	if got := failing.Exec([]string{"-n", "7"}, io.Discard); got != ExitIncomplete || !strings.Contains(logged.String(), "level=warning msg=\"explained: cells missing\"") {
		t.Errorf("explained: status %d, log %q", got, logged.String())
	}
}
