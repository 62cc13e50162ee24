// Package cli is what the commands train, eval, predict and compare share:
// the main skeleton (command line, signals, how an error is reported), one
// table of exit statuses with one meaning each, the flags more than one
// command takes (each declared here once), and the lock on a run
// directory.
//
// A command is an Options struct, a parse function that reads the
// command line into it, and run(ctx, opts) error; Main does the rest:
//
//	func main() {
//		cli.Main(cli.Command[Options]{Name: "eval", Parse: parseFlags, Run: run})
//	}
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	log "github.com/sirupsen/logrus"
)

// Command is one of the project's commands, as Main runs it.
type Command[O any] struct {
	Name string
	// Parse reads the command line into the command's options and
	// checks them; flag.ErrHelp after -h.
	Parse func(args []string, stderr io.Writer) (O, error)
	// Run does the work. Its context ends at SIGINT or SIGTERM.
	Run func(ctx context.Context, o O) error
	// Explain, when set, logs an error the command words its own way
	// (how to continue an interrupted run, say) and returns true;
	// every other error is logged as it is.
	Explain func(o O, err error) bool
}

// Main runs c on the process's arguments and exits with its status.
func Main[O any](c Command[O]) {
	os.Exit(c.Exec(os.Args[1:], os.Stderr))
}

// Exec runs c on args and returns its exit status (the table in
// status.go): a bad command line is printed to stderr as "NAME: what",
// status 2; -h is status 0; otherwise Run's error, reported by Explain or
// logged, decides the status (Status).
func (c Command[O]) Exec(args []string, stderr io.Writer) int {
	o, err := c.Parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = c.Run(ctx, o)
	if err != nil && (c.Explain == nil || !c.Explain(o, err)) {
		log.Error(err)
	}
	return Status(err)
}
