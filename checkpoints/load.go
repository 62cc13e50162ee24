package checkpoints

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// Locate is the checkpoint a command's -ckpt DIR names: dir itself, or
// dir/last where dir is a run's directory without a checkpoint of its own.
func Locate(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, "last", ManifestName)); err == nil {
			return filepath.Join(dir, "last")
		}
	}
	return dir
}

// Load reads the checkpoint in dir, verifying its format, version, the
// sizes and checksums of its files, and that they match its layout.
//
// A damaged or edited checkpoint cannot make Load panic, read forever or
// allocate more than its files' sizes warrant: every number of the
// manifest is checked before it sizes anything (parseManifest); every file
// must be a regular file (not a device, a pipe or a directory, directly or
// through a symlink); the manifest must be under a 64th of the machine's
// memory, since decoding JSON can take tens of times a file's size; the
// binary files must be exactly as long as the layout and optimizer
// lengths need, and fit in the machine's memory together. Load allocates
// their sizes once, for the values, reading each file once (FuzzLoad
// checks at most the binary files' sizes, 100 times the manifest's and 1
// MiB in all).
func Load(dir string) (*Checkpoint, error) {
	mpath := filepath.Join(dir, ManifestName)
	raw, err := readManifest(mpath)
	if err != nil {
		return nil, err
	}
	m, err := parseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	if total, _ := sysmem.Total(); float64(m.params.Size+m.opt.Size) > total {
		return nil, fmt.Errorf("%s: %w: its files hold %s of values, more than the %s this machine has",
			dir, sysmem.ErrTooBig, sysmem.Format(float64(m.params.Size+m.opt.Size)), sysmem.Format(total))
	}
	params, err := openValues(dir, m.params)
	if err != nil {
		return nil, err
	}
	defer params.f.Close()
	opt, err := openValues(dir, m.opt)
	if err != nil {
		return nil, err
	}
	defer opt.f.Close()

	c := &Checkpoint{Settings: compact(m.Settings), Epoch: m.Epoch, Batch: m.Batch, Step: m.Step, Metrics: compact(m.Metrics), Layout: m.Layout}
	for i := range m.Particles {
		p := Particle{Trunk: params.next(m.trunk)}
		for _, n := range m.heads {
			p.Heads = append(p.Heads, params.next(n))
		}
		if m.stats > 0 {
			p.Stats = params.next(m.stats)
		}
		lengths := m.Optimizer.Lengths[i]
		p.TrunkOpt = opt.next(lengths[0])
		for _, n := range lengths[1:] {
			p.HeadOpts = append(p.HeadOpts, opt.next(n))
		}
		c.Particles = append(c.Particles, p)
	}
	for _, r := range []*values{params, opt} {
		if err := r.finish(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// LoadManifest reads and checks the manifest of the checkpoint in dir as
// Load does, but not its binary files: a Checkpoint without Particles,
// to read what a checkpoint is (its settings, position and metrics)
// without the cost of its values.
func LoadManifest(dir string) (*Checkpoint, error) {
	mpath := filepath.Join(dir, ManifestName)
	raw, err := readManifest(mpath)
	if err != nil {
		return nil, err
	}
	m, err := parseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	return &Checkpoint{Settings: compact(m.Settings), Epoch: m.Epoch, Batch: m.Batch, Step: m.Step, Metrics: compact(m.Metrics), Layout: m.Layout}, nil
}

// readManifest reads the manifest file at path.
func readManifest(path string) ([]byte, error) {
	f, st, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no checkpoint here (missing %s): %w", filepath.Dir(path), ManifestName, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if total, _ := sysmem.Total(); float64(st.Size()) > total/64 {
		return nil, fmt.Errorf("%s: %s, more than a 64th of this machine's %s: not a manifest train wrote (a few MB)",
			path, sysmem.Format(float64(st.Size())), sysmem.Format(total))
	}
	raw := make([]byte, st.Size())
	if _, err := io.ReadFull(f, raw); err != nil {
		return nil, fmt.Errorf("%s: %w (the file changed while it was read)", path, err)
	}
	return raw, nil
}

// openRegular opens path if it is a regular file, directly or through a
// symlink: a symlink to /dev/zero would be read until memory runs out, a
// pipe would block the open, a directory cannot be read.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file but %s", path, regfile.Kind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	// The file opened must be the one checked, not one put there since.
	opened, err := f.Stat()
	if err == nil && !os.SameFile(st, opened) {
		err = fmt.Errorf("%s: replaced while it was opened", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, opened, nil
}

// contents is a manifest whose numbers parseManifest has checked, with
// what they say to read.
type contents struct {
	manifest
	trunk, stats int   // values per particle
	heads        []int // values per particle, by task
	params, opt  file  // of the sizes the vectors need
}

// parseManifest decodes a manifest and checks every number in it that
// sizes or positions anything, reading no file: format and version; the
// position (epoch, batch and step not negative); at least one particle,
// with one optimizer length list each, of one length per vector, none
// negative; the layout's shapes; a parameters and an optimizer file, by
// plain names, whose sizes are exactly what the layout and the lengths
// need.
func parseManifest(raw []byte) (*contents, error) {
	var m contents
	if err := json.Unmarshal(raw, &m.manifest); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	switch {
	case m.Format != Format:
		return nil, fmt.Errorf("format %q, not a %s", m.Format, Format)
	case m.Version > Version:
		return nil, fmt.Errorf("format version %d is newer than this program reads (%d); use a newer build", m.Version, Version)
	case m.Version < 1:
		return nil, fmt.Errorf("format version %d is not valid", m.Version)
	case m.Epoch < 0 || m.Batch < 0 || m.Step < 0:
		return nil, fmt.Errorf("position epoch %d, batch %d, step %d: none may be negative", m.Epoch, m.Batch, m.Step)
	case m.Particles < 1 || len(m.Optimizer.Lengths) != m.Particles:
		return nil, fmt.Errorf("%d particles with %d optimizer length lists", m.Particles, len(m.Optimizer.Lengths))
	}
	// Sums and products of sizes stay below 2⁶³/8: beyond, no file holds
	// them, and arithmetic with them would overflow.
	const most = math.MaxInt64 / 8
	var err error
	if m.trunk, err = size(m.Layout.Trunk); err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	if m.stats, err = size(m.Layout.Stats); err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	perParticle := int64(m.trunk) + int64(m.stats)
	for _, h := range m.Layout.Heads {
		n, err := size(h)
		if err != nil {
			return nil, fmt.Errorf("layout: %w", err)
		}
		if perParticle > most-int64(n) {
			return nil, fmt.Errorf("layout: %d heads of up to %d values are more than a file can hold", len(m.Layout.Heads), n)
		}
		m.heads = append(m.heads, n)
		perParticle += int64(n)
	}
	if perParticle > 0 && int64(m.Particles) > most/perParticle {
		return nil, fmt.Errorf("%d particles of %d values are more than a file can hold", m.Particles, perParticle)
	}
	var optValues int64
	for i, lengths := range m.Optimizer.Lengths {
		if len(lengths) != 1+len(m.heads) {
			return nil, fmt.Errorf("particle %d has %d optimizer state lengths, want %d", i, len(lengths), 1+len(m.heads))
		}
		for _, n := range lengths {
			if n < 0 || optValues > most-int64(n) {
				return nil, fmt.Errorf("particle %d has optimizer state lengths %v", i, lengths)
			}
			optValues += int64(n)
		}
	}
	need := map[string]int64{roleParameters: 8 * int64(m.Particles) * perParticle, roleOptimizer: 8 * optValues}
	for _, f := range []struct {
		role string
		dst  *file
	}{{roleParameters, &m.params}, {roleOptimizer, &m.opt}} {
		if *f.dst, err = m.file(f.role); err != nil {
			return nil, err
		}
		if f.dst.Size != need[f.role] {
			return nil, fmt.Errorf("the %s file %s is %d bytes, but the manifest's layout and optimizer lengths need %d",
				f.role, f.dst.Name, f.dst.Size, need[f.role])
		}
	}
	return &m, nil
}

// file is the manifest's entry for the file of role.
func (m *contents) file(role string) (file, error) {
	for _, f := range m.Files {
		if f.Role != role {
			continue
		}
		if f.Name == "" || f.Name != filepath.Base(f.Name) || f.Name == "." || f.Name == ".." {
			return file{}, fmt.Errorf("the manifest names the %s file %q, not a plain file name", role, f.Name)
		}
		return f, nil
	}
	return file{}, fmt.Errorf("the manifest names no %s file", role)
}

// values hands out the float64 vectors of a binary file, in order,
// reading it once and hashing it on the way.
type values struct {
	path  string
	f     *os.File
	want  file
	hash  hash.Hash
	chunk []byte
	err   error // the first read error; later vectors come back zero
}

// openValues opens the binary file the manifest describes as f, which
// must be a regular file of f.Size bytes.
func openValues(dir string, f file) (*values, error) {
	path := filepath.Join(dir, f.Name)
	file, st, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: missing: the manifest names it as the %s file", path, f.Role)
	}
	if err != nil {
		return nil, err
	}
	if st.Size() != f.Size {
		file.Close()
		return nil, fmt.Errorf("%s: %d bytes, the manifest says %d: the file is truncated or was replaced", path, st.Size(), f.Size)
	}
	return &values{path: path, f: file, want: f, hash: sha256.New(), chunk: make([]byte, 64<<10)}, nil
}

// next reads the next n values. The manifest's sizes are checked: the
// file holds them all unless it changed since it was opened.
func (r *values) next(n int) []float64 {
	v := make([]float64, n)
	for rest := v; len(rest) > 0 && r.err == nil; {
		k := min(len(rest), len(r.chunk)/8)
		b := r.chunk[:8*k]
		if _, err := io.ReadFull(r.f, b); err != nil {
			r.err = fmt.Errorf("%s: %w (the file changed while it was read)", r.path, err)
			break
		}
		r.hash.Write(b)
		for i := range rest[:k] {
			rest[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		rest = rest[k:]
	}
	return v
}

// finish checks that the vectors read were the whole file, with the
// manifest's checksum.
func (r *values) finish() error {
	if r.err != nil {
		return r.err
	}
	if n, _ := r.f.Read(r.chunk[:1]); n > 0 {
		return fmt.Errorf("%s: longer than the manifest says (the file changed while it was read)", r.path)
	}
	if sum := hex.EncodeToString(r.hash.Sum(nil)); sum != r.want.SHA256 {
		return fmt.Errorf("%s: SHA-256 %s, the manifest says %s: the file is damaged", r.path, sum, r.want.SHA256)
	}
	return nil
}
