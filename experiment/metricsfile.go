package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/metrics"
)

// MetricsLine is one line of OUT/metrics.jsonl: one task's scores on one
// split after one epoch.
type MetricsLine struct {
	Epoch   int     `json:"epoch"`
	Step    int     `json:"step"`
	Split   string  `json:"split"` // test, or valid where there is a validation set
	Task    string  `json:"task"`
	LR      float64 `json:"lr"`
	Loss    float64 `json:"train_loss"` // mean over the epoch and the particles
	Seconds float64 `json:"seconds"`    // training time so far, over resumes
	metrics.Score
	Particles []metrics.Score `json:"particles"`
	// ParticleLoss is each particle's mean training loss of the task over
	// the epoch; absent for an epoch resumed mid-way from a checkpoint
	// that did not record it.
	ParticleLoss []float64 `json:"particle_train_loss,omitempty"`
}

// encodable reports the first metrics line that JSON cannot encode (a
// non-finite score), naming its split and task.
func encodable(lines []MetricsLine) error {
	for _, l := range lines {
		if _, err := json.Marshal(l); err != nil {
			return fmt.Errorf("scores on %s of task %s are not finite: %w", l.Split, l.Task, err)
		}
	}
	return nil
}

// MetricsFile is the name of the run's metrics file in its directory.
const MetricsFile = "metrics.jsonl"

// encodeHistory is what metrics.jsonl holds: one JSON line per history
// line.
func (r *Run) encodeHistory() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, l := range r.history {
		if err := enc.Encode(l); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// appendMetrics adds the epoch's lines to metrics.jsonl. The file is
// appended to, without fsync, where it holds what this process wrote of
// the history before them: the checkpoint's history is the record, and a
// file cut short or edited is rewritten from it whole (here, or by
// syncMetrics when the run resumes). Rewriting the whole file every
// epoch would cost a run of many short epochs more than its training.
func (r *Run) appendMetrics(lines []MetricsLine) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	path := filepath.Join(r.Out, MetricsFile)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() || st.Size() != r.metricsSize || r.metricsSize == 0 {
		whole, err := r.encodeHistory()
		if err != nil {
			return err
		}
		return r.writeMetricsBytes(whole)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|noFollow, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.metricsSize = -1 // unknown: the next epoch rewrites the file
		return err
	}
	r.metricsSize += int64(b.Len())
	if r.Hooks.Metrics != nil {
		r.Hooks.Metrics(r.history)
	}
	return nil
}

// writeMetricsBytes replaces metrics.jsonl by b, the whole history.
func (r *Run) writeMetricsBytes(b []byte) error {
	r.metricsSize = -1
	err := atomicfile.Write(filepath.Join(r.Out, MetricsFile), 0o644, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	r.metricsSize = int64(len(b))
	if r.Hooks.Metrics != nil {
		r.Hooks.Metrics(r.history)
	}
	return nil
}

// syncMetrics rewrites metrics.jsonl from the history unless it holds
// exactly what the history encodes (a run without history yet needs no
// file).
func (r *Run) syncMetrics() error {
	want, err := r.encodeHistory()
	if err != nil {
		return err
	}
	path := filepath.Join(r.Out, MetricsFile)
	have, err := readSized(path, len(want))
	switch {
	case errors.Is(err, os.ErrNotExist) && len(want) == 0:
		return nil
	case err == nil && bytes.Equal(have, want):
		r.metricsSize = int64(len(want))
		return nil
	}
	if err := r.writeMetricsBytes(want); err != nil {
		return fmt.Errorf("rewriting %s from the checkpoint's history: %w", path, err)
	}
	return nil
}

// readSized returns the content of the regular file at path if it has
// size bytes; otherwise nil, or the error opening it. It never reads more
// than size bytes.
func readSized(path string, size int) ([]byte, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() != int64(size) {
		return nil, nil
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil
	}
	return b, nil
}
