package main

import (
	"fmt"
	"os"
	"time"

	"github.com/cheggaaa/pb/v3"
	"github.com/mattn/go-isatty"
	log "github.com/sirupsen/logrus"
)

// progress shows a progress bar (steps, it/s, a status such as the running
// losses) on a terminal; elsewhere (CI logs, batch jobs) it logs a line
// every tenth of the run instead.
type progress struct {
	bar      *pb.ProgressBar
	label    string
	total    int
	logEvery int // steps between log lines when there is no bar; 0: none
	start    time.Time
	skipped  int // steps done before this run started
}

func newProgress(enabled bool, label string, total int) *progress {
	p := &progress{label: label, total: total, start: time.Now()}
	switch {
	case !enabled:
	case isatty.IsTerminal(os.Stderr.Fd()):
		tmpl := `{{string . "label"}} {{counters . }} {{bar . }} {{speed . "%s it/s" }} {{string . "status"}}`
		p.bar = pb.ProgressBarTemplate(tmpl).Start(total)
		p.bar.Set("label", label)
	default:
		p.logEvery = max(1, total/10)
	}
	return p
}

// step records that step n (1-based) is done, with a status to show.
func (p *progress) step(n int, status string) {
	switch {
	case p.bar != nil:
		p.bar.Set("status", status)
		p.bar.Increment()
	case p.logEvery > 0 && (n%p.logEvery == 0 || n == p.total):
		msg := fmt.Sprintf("%s: %d/%d, %.2f it/s", p.label, n, p.total, float64(n-p.skipped)/time.Since(p.start).Seconds())
		if status != "" {
			msg += ", " + status
		}
		log.Info(msg)
	}
}

// skip records n steps done before this run (a resumed epoch).
func (p *progress) skip(n int) {
	p.skipped = n
	if p.bar != nil && n > 0 {
		p.bar.SetCurrent(int64(n))
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
