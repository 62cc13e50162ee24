// Package progress shows how far long work has got: a bar (done, total,
// rate and a status such as the running losses) on a terminal, and
// elsewhere (CI logs, batch jobs), where a bar would fill the log, a log
// line every tenth of the work.
package progress

import (
	"fmt"
	"os"
	"time"

	"github.com/cheggaaa/pb/v3"
	"github.com/mattn/go-isatty"
	log "github.com/sirupsen/logrus"
)

// Bar is the progress of one piece of work of a known size.
type Bar struct {
	bar     *pb.ProgressBar
	label   string
	unit    string // what is counted, per second: "it", "examples"
	total   int
	logNext int // done at the next log line when there is no bar; 0: none
	start   time.Time
	skipped int // done before this process started (a resumed epoch)
}

// New starts a bar labelled label over total units; disabled, it shows
// nothing.
func New(enabled bool, label, unit string, total int) *Bar {
	p := &Bar{label: label, unit: unit, total: total, start: time.Now()}
	switch {
	case !enabled:
	case isatty.IsTerminal(os.Stderr.Fd()):
		tmpl := `{{string . "label"}} {{counters . }} {{bar . }} {{speed . "%s ` + unit + `/s" }} {{string . "status"}}`
		p.bar = pb.ProgressBarTemplate(tmpl).Start(total)
		p.bar.Set("label", label)
	default:
		p.logNext = max(1, total/10)
	}
	return p
}

// Done records that n units are done, with a status to show ("" for
// none).
func (p *Bar) Done(n int, status string) {
	switch {
	case p.bar != nil:
		p.bar.Set("status", status)
		p.bar.SetCurrent(int64(n))
	case p.logNext > 0 && (n >= p.logNext || n == p.total):
		for p.logNext <= n {
			p.logNext += max(1, p.total/10)
		}
		msg := fmt.Sprintf("%s: %d/%d, %.2f %s/s", p.label, n, p.total, float64(n-p.skipped)/time.Since(p.start).Seconds(), p.unit)
		if status != "" {
			msg += ", " + status
		}
		log.Info(msg)
	}
}

// Skip records n units done before this process started, which the rate
// leaves out.
func (p *Bar) Skip(n int) {
	p.skipped = n
	if p.bar != nil && n > 0 {
		p.bar.SetCurrent(int64(n))
	}
	for p.logNext > 0 && p.logNext <= n {
		p.logNext += max(1, p.total/10)
	}
}

// Finish ends the bar.
func (p *Bar) Finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
