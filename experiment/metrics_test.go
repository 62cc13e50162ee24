package experiment

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
)

// metricsLines is the number of lines of out/metrics.jsonl.
func metricsLines(t *testing.T, out string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// metrics.jsonl is rebuilt from the checkpoint's history when it
// disagrees with it, even when the run has no epoch left to train: after
// a failed write of the last epoch's metrics, a failed best/ (whose error
// says that last/ is saved), or an edit. An epoch has 2 lines (a test
// line per task).
func TestMetricsRebuiltFromHistory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		epochs int
		hurt   func(t *testing.T, out string) // before the last epoch ends
		want   string                         // in the error of the first run
		heal   func(t *testing.T, out string) // after it
	}{
		{"last epoch's metrics not written", 2, func(t *testing.T, out string) {
			os.Remove(filepath.Join(out, MetricsFile))
			if err := os.Mkdir(filepath.Join(out, MetricsFile), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "metrics.jsonl", func(t *testing.T, out string) { os.Remove(filepath.Join(out, MetricsFile)) }},
		{"last epoch's best/ not saved", 1, func(t *testing.T, out string) { replaceByFile("best")(t, out) },
			"OUT/last is saved (epoch 1), and resuming it saves best/ again", func(t *testing.T, out string) { os.Remove(filepath.Join(out, "best")) }},
		{"metrics cut after the run", 2, nil, "", func(t *testing.T, out string) {
			p := filepath.Join(out, MetricsFile)
			b, _ := os.ReadFile(p)
			first, _, _ := bytes.Cut(b, []byte("\n"))
			os.WriteFile(p, append(first, '\n'), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			r := newRun(t, testSettings(tc.epochs), out)
			if tc.hurt != nil {
				r.Hooks.Step = func(epoch, batch int, _ []float64) {
					if epoch == tc.epochs-1 && batch == 1 {
						tc.hurt(t, out)
					}
				}
			}
			err := r.Train(context.Background())
			if tc.want == "" && err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), out, "OUT"), tc.want)) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			tc.heal(t, out)
			var drawn int
			r = resume(t, out, tc.epochs)
			r.Hooks.Metrics = func(h []MetricsLine) { drawn = len(h) }
			if err := r.Train(context.Background()); err != nil {
				t.Fatal(err)
			}
			// After a failed best/ the metrics are written: no rewrite.
			wantDrawn := 2 * tc.epochs
			if tc.epochs == 1 {
				wantDrawn = 0
			}
			if n := metricsLines(t, out); n != 2*tc.epochs || drawn != wantDrawn {
				t.Errorf("metrics.jsonl has %d lines, the hook saw %d; want the history's %d, %d", n, drawn, 2*tc.epochs, wantDrawn)
			}
			if _, err := checkpoints.Load(filepath.Join(out, "best")); err != nil {
				t.Errorf("best/: %v", err)
			}
			// In agreement with the history, the file is left alone.
			drawn = 0
			if err := r.Train(context.Background()); err != nil || drawn != 0 {
				t.Errorf("a run in agreement: error %v, rewritten %v", err, drawn != 0)
			}
		})
	}
}
