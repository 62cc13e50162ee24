// Package checkpoints saves and restores the state of a training run, so
// that a run survives being stopped and its ensemble can be evaluated
// without retraining.
//
// # Format (version 1)
//
// A checkpoint is a directory holding manifest.json and two binary files.
// manifest.json is a JSON object:
//
//	format       "mtsgd-checkpoint"
//	version      1
//	settings     the run's settings as the training command wrote them
//	             (data set, model, particles, method, every hyperparameter,
//	             seed); opaque to this package
//	epoch        completed epochs
//	batch        batches done in the next epoch (0 at an epoch's end)
//	step         updates done in all
//	metrics      the last evaluation, as the training command wrote it
//	particles    M, the number of particles
//	layout       {"trunk": [T...], "heads": [[T...] per task],
//	             "stats": [T...]}, where T is {"name": string, "shape":
//	             [int...]}: the parameter tensors of the trunk and of each
//	             head, and the trunk's batch-normalisation running
//	             statistics (absent for models without any), in order
//	optimizer    {"lengths": [[n_trunk, n_head0, n_head1, ...] per particle]}:
//	             the length of each optimiser state vector (0 before the
//	             optimiser's first step)
//	files        [{"role": "parameters"|"optimizer", "name": string,
//	              "size": bytes, "sha256": hex}]
//
// Both binary files are little-endian IEEE-754 float64 values, one vector
// after another with no padding or headers. The parameters file holds, for
// particle 0, 1, …, M−1 in turn, the trunk vector (the layout's trunk
// tensors, each row-major, concatenated), then each head vector in task
// order, then the statistics vector (empty without statistics). The
// optimizer file holds, in the same order, each vector's
// optimiser state as package optim lays it out (optim.Stateful: for SGD
// the momentum buffer; for Adam the step count, then the first and then
// the second moment estimates).
//
// The random state needed to continue identically is the settings' seed
// with epoch and batch: the shuffled order of an epoch depends on the seed
// and the epoch number only (package data), and nothing else in training is
// random after initialisation.
//
// # Writing
//
// Binary files are named by their content (parameters-<hash>.bin), each
// written to a temporary file, fsynced and renamed into place; the manifest
// is written the same way last, and only then are files that it no longer
// names removed. A crash or a full disk at any point leaves the previous
// manifest and every file it names in place: the checkpoint is always
// readable, as the old or the new one.
//
// # Reading
//
// Load trusts no number of the manifest: each is checked before it sizes
// an allocation or an index, and only regular files are read, so a
// damaged or edited checkpoint is an error naming the file and the
// problem, never a panic, an out-of-memory crash or an endless read.
package checkpoints

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// Format and Version identify the files this package writes and reads.
const (
	Format  = "mtsgd-checkpoint"
	Version = 1
)

// ManifestName is the manifest's file name in a checkpoint directory.
const ManifestName = "manifest.json"

// Tensor names a parameter tensor and its shape.
type Tensor struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// Layout lists the parameter tensors of a trunk and of each head, and the
// running statistics of the trunk's batch normalisation.
type Layout struct {
	Trunk []Tensor   `json:"trunk"`
	Heads [][]Tensor `json:"heads"`
	Stats []Tensor   `json:"stats,omitempty"`
}

// size is the number of values in ts, the length of their flat vector:
// at most maxVector, so that sums and products of sizes cannot overflow.
func size(ts []Tensor) (int, error) {
	n := 0
	for _, t := range ts {
		m := 1
		for _, s := range t.Shape {
			if s < 1 || m > maxVector/s {
				return 0, fmt.Errorf("tensor %s has shape %v", t.Name, t.Shape)
			}
			m *= s
		}
		if n > maxVector-m {
			return 0, fmt.Errorf("the tensors up to %s hold more than %d values", t.Name, maxVector)
		}
		n += m
	}
	return n, nil
}

// maxVector bounds the values of one parameter vector (a trunk, a head,
// the statistics): 2³¹−1, 16 GiB of float64, some 190 times ResNet-18's
// trunk.
const maxVector = math.MaxInt32

// Equal reports whether l and o describe the same tensors, and if not,
// the first difference.
func (l Layout) Equal(o Layout) error {
	cmp := func(what string, a, b []Tensor) error {
		if len(a) != len(b) {
			return fmt.Errorf("%s has %d tensors, not %d", what, len(a), len(b))
		}
		for i := range a {
			if a[i].Name != b[i].Name || !slices.Equal(a[i].Shape, b[i].Shape) {
				return fmt.Errorf("%s tensor %d is %s %v, not %s %v", what, i, a[i].Name, a[i].Shape, b[i].Name, b[i].Shape)
			}
		}
		return nil
	}
	if err := cmp("the trunk", l.Trunk, o.Trunk); err != nil {
		return err
	}
	if len(l.Heads) != len(o.Heads) {
		return fmt.Errorf("%d heads, not %d", len(l.Heads), len(o.Heads))
	}
	for j := range l.Heads {
		if err := cmp(fmt.Sprintf("head %d", j), l.Heads[j], o.Heads[j]); err != nil {
			return err
		}
	}
	return cmp("the statistics", l.Stats, o.Stats)
}

// Particle is one particle's parameters, running statistics and optimiser
// states.
type Particle struct {
	Trunk    []float64
	Heads    [][]float64
	Stats    []float64
	TrunkOpt []float64
	HeadOpts [][]float64
}

// Checkpoint is the state of a run.
type Checkpoint struct {
	Settings  json.RawMessage
	Epoch     int // completed epochs
	Batch     int // batches done in the next epoch
	Step      int // updates done in all
	Metrics   json.RawMessage
	Layout    Layout
	Particles []Particle
}

type manifest struct {
	Format    string          `json:"format"`
	Version   int             `json:"version"`
	Settings  json.RawMessage `json:"settings"`
	Epoch     int             `json:"epoch"`
	Batch     int             `json:"batch"`
	Step      int             `json:"step"`
	Metrics   json.RawMessage `json:"metrics,omitempty"`
	Particles int             `json:"particles"`
	Layout    Layout          `json:"layout"`
	Optimizer struct {
		Lengths [][]int `json:"lengths"`
	} `json:"optimizer"`
	Files []file `json:"files"`
}

type file struct {
	Role   string `json:"role"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

const (
	roleParameters = "parameters"
	roleOptimizer  = "optimizer"
)

// Save writes c to the directory dir, creating it if needed, so that dir
// holds either the checkpoint it held before or c, whatever happens.
func Save(dir string, c *Checkpoint) error {
	if err := c.check(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	m := manifest{
		Format: Format, Version: Version, Settings: c.Settings,
		Epoch: c.Epoch, Batch: c.Batch, Step: c.Step, Metrics: c.Metrics,
		Particles: len(c.Particles), Layout: c.Layout,
	}
	// The vectors are encoded twice, once to name the file by its hash and
	// once into it, rather than buffered: a checkpoint of five ResNet-18
	// particles with Adam is over a gigabyte.
	var params, opt [][]float64
	for _, p := range c.Particles {
		params = append(params, p.Trunk)
		params = append(params, p.Heads...)
		params = append(params, p.Stats)
		lengths := []int{len(p.TrunkOpt)}
		opt = append(opt, p.TrunkOpt)
		for _, h := range p.HeadOpts {
			lengths = append(lengths, len(h))
			opt = append(opt, h)
		}
		m.Optimizer.Lengths = append(m.Optimizer.Lengths, lengths)
	}
	for _, b := range []struct {
		role string
		data [][]float64
	}{{roleParameters, params}, {roleOptimizer, opt}} {
		h := sha256.New()
		size, _ := writeFloats(h, b.data) // a hash takes every write
		sum := h.Sum(nil)
		f := file{Role: b.role, Name: fmt.Sprintf("%s-%s.bin", b.role, hex.EncodeToString(sum[:8])),
			Size: size, SHA256: hex.EncodeToString(sum)}
		m.Files = append(m.Files, f)
		path := filepath.Join(dir, f.Name)
		if same, _ := sameFile(path, f); same {
			continue // content-named: already there, whole
		}
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := writeFloats(w, b.data); return err }); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := atomicfile.Write(filepath.Join(dir, ManifestName), 0o644, func(w io.Writer) error {
		_, err := w.Write(append(js, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return removeUnnamed(dir, m.Files)
}

// sameFile reports whether path exists with f's size (its name carries the
// content hash, and files appear only whole).
func sameFile(path string, f file) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return st.Size() == f.Size, nil
}

// removeUnnamed deletes the binary files of earlier checkpoints and
// leftover temporary files in dir.
func removeUnnamed(dir string, keep []file) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		stale := strings.HasSuffix(name, ".bin") || strings.Contains(name, ".tmp")
		if !stale || slices.ContainsFunc(keep, func(f file) bool { return f.Name == name }) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("checkpoint: removing stale %w", err)
		}
	}
	return nil
}

func (c *Checkpoint) check() error {
	trunk, err := size(c.Layout.Trunk)
	if err != nil {
		return err
	}
	heads := make([]int, len(c.Layout.Heads))
	for j, h := range c.Layout.Heads {
		if heads[j], err = size(h); err != nil {
			return err
		}
	}
	stats, err := size(c.Layout.Stats)
	if err != nil {
		return err
	}
	if len(c.Particles) == 0 {
		return errors.New("no particles")
	}
	for i, p := range c.Particles {
		if len(p.Trunk) != trunk || len(p.Heads) != len(heads) || len(p.HeadOpts) != len(heads) || len(p.Stats) != stats {
			return fmt.Errorf("particle %d does not match the layout", i)
		}
		for j, h := range p.Heads {
			if len(h) != heads[j] {
				return fmt.Errorf("particle %d head %d has %d values, the layout %d", i, j, len(h), heads[j])
			}
		}
	}
	return nil
}

// writeFloats writes the vectors' values to w as little-endian float64s,
// through a buffer of fixed size, and returns the number of bytes written.
func writeFloats(w io.Writer, vs [][]float64) (int64, error) {
	var buf [1 << 16]byte
	var n int64
	for _, v := range vs {
		for len(v) > 0 {
			chunk := v[:min(len(v), len(buf)/8)]
			for i, x := range chunk {
				binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
			}
			k, err := w.Write(buf[:8*len(chunk)])
			n += int64(k)
			if err != nil {
				return n, err
			}
			v = v[len(chunk):]
		}
	}
	return n, nil
}

// compact undoes the manifest's indentation of an embedded JSON value.
func compact(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
