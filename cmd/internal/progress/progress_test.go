package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"
)

// Off a terminal (a test's stderr) a bar logs a line every tenth of the
// work, whatever the size of the jumps, the last one included; a
// disabled bar logs nothing; a skipped start logs from where it was.
func TestLogLines(t *testing.T) {
	var buf bytes.Buffer
	log.SetOutput(&buf)
	defer log.SetOutput(os.Stderr)
	for _, tc := range []struct {
		name    string
		enabled bool
		skip    int
		steps   []int
		lines   []string
	}{
		{"every step", true, 0, seq(1, 100, 1), []string{"w: 10/100", "w: 50/100", "w: 100/100"}},
		{"jumps", true, 0, []int{35, 70, 100}, []string{"w: 35/100", "w: 70/100", "w: 100/100"}},
		{"resumed", true, 60, seq(61, 100, 1), []string{"w: 70/100", "w: 100/100"}},
		{"disabled", false, 0, seq(1, 100, 1), nil},
	} {
		buf.Reset()
		b := New(tc.enabled, "w", "it", 100)
		b.Skip(tc.skip)
		for _, n := range tc.steps {
			b.Done(n, "")
		}
		b.Finish()
		got := buf.String()
		for _, want := range tc.lines {
			if !strings.Contains(got, want) {
				t.Errorf("%s: no line %q in\n%s", tc.name, want, got)
			}
		}
		wantLines := map[string]int{"every step": 10, "jumps": 3, "resumed": 4, "disabled": 0}[tc.name]
		if n := strings.Count(got, "\n"); n != wantLines {
			t.Errorf("%s: %d lines, want %d:\n%s", tc.name, n, wantLines, got)
		}
	}
}

func seq(from, to, by int) []int {
	var s []int
	for i := from; i <= to; i += by {
		s = append(s, i)
	}
	return s
}
