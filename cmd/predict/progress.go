package main

import (
	"fmt"
	"os"
	"time"

	"github.com/cheggaaa/pb/v3"
	"github.com/mattn/go-isatty"
	log "github.com/sirupsen/logrus"
)

// progress shows a progress bar (examples done, their rate) on a
// terminal, as train does; elsewhere it logs a line every tenth of the
// work instead.
type progress struct {
	bar     *pb.ProgressBar
	label   string
	total   int
	logNext int // examples done at the next log line when there is no bar; 0: none
	start   time.Time
}

func newProgress(enabled bool, label string, total int) *progress {
	p := &progress{label: label, total: total, start: time.Now()}
	switch {
	case !enabled:
	case isatty.IsTerminal(os.Stderr.Fd()):
		tmpl := `{{string . "label"}} {{counters . }} {{bar . }} {{speed . "%s examples/s" }}`
		p.bar = pb.ProgressBarTemplate(tmpl).Start(total)
		p.bar.Set("label", label)
	default:
		p.logNext = max(1, total/10)
	}
	return p
}

// step records that n examples are done.
func (p *progress) step(n int, status string) {
	switch {
	case p.bar != nil:
		p.bar.SetCurrent(int64(n))
	case p.logNext > 0 && n >= p.logNext:
		for p.logNext <= n {
			p.logNext += max(1, p.total/10)
		}
		msg := fmt.Sprintf("%s: %d/%d, %.0f examples/s", p.label, n, p.total, float64(n)/time.Since(p.start).Seconds())
		if status != "" {
			msg += ", " + status
		}
		log.Info(msg)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
