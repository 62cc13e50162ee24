package checkpoints

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// fuzzFiles are sample()'s checkpoint as Save writes it, with the binary
// files renamed p.bin and o.bin (the names the fuzz targets write them
// under), and the manifest changed by each of edits.
func fuzzFiles(f *testing.F, edits ...func(m map[string]any)) (manifest, params, opt []byte) {
	dir := f.TempDir()
	if err := Save(dir, sample()); err != nil {
		f.Fatal(err)
	}
	read := func(pattern string) []byte {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		b, err := os.ReadFile(m[0])
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	params, opt = read("parameters-*.bin"), read("optimizer-*.bin")
	manifest = rewrite(read(ManifestName), append([]func(map[string]any){func(m map[string]any) {
		set(m, "p.bin", "files", 0, "name")
		set(m, "o.bin", "files", 1, "name")
	}}, edits...)...)
	return manifest, params, opt
}

// rewrite applies edits to a manifest, numbers kept exact; a manifest
// that is not a JSON object comes back unchanged.
func rewrite(manifest []byte, edits ...func(m map[string]any)) []byte {
	dec := json.NewDecoder(bytes.NewReader(manifest))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return manifest
	}
	for _, edit := range edits {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return manifest
	}
	return b
}

// tamperings are the tampered manifests, as seeds.
var tamperings = []func(m map[string]any){
	func(m map[string]any) { set(m, json.Number("2305843009213693953"), "optimizer", "lengths", 0, 0) },
	func(m map[string]any) { set(m, json.Number("1000000000000"), "optimizer", "lengths", 0, 0) },
	func(m map[string]any) {
		huge := make([]any, 64)
		for i := range huge {
			huge[i] = map[string]any{"name": "w", "shape": []any{json.Number("2147483647")}}
		}
		set(m, huge, "layout", "trunk")
	},
	func(m map[string]any) { m["batch"] = json.Number("-5") },
	func(m map[string]any) { m["epoch"] = json.Number("-1") },
	func(m map[string]any) { m["step"] = json.Number("-100") },
	func(m map[string]any) { m["batch"] = json.Number("99999") },
	func(m map[string]any) { set(m, json.Number("100000000"), "settings", "batch") },
	func(m map[string]any) { m["particles"] = json.Number("1000000000") },
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The manifest parser never panics, allocates at most 100 times its
// input (encoding/json's structures; tens of times at worst) and 1 MiB,
// and what it accepts is consistent: the files' sizes are exactly what
// the layout and the optimizer lengths need.
//
//	go test ./checkpoints -run '^$' -fuzz FuzzParseManifest -fuzztime 60s
func FuzzParseManifest(f *testing.F) {
	for _, edit := range append(tamperings, func(map[string]any) {}) {
		manifest, _, _ := fuzzFiles(f, edit)
		f.Add(manifest)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m *contents
		var err error
		if n := allocated(func() { m, err = parseManifest(raw) }); n > 100*uint64(len(raw))+1<<20 {
			t.Fatalf("parsing %d bytes allocated %d", len(raw), n)
		}
		if err != nil {
			return
		}
		perParticle := int64(m.trunk + m.stats)
		for _, h := range m.heads {
			perParticle += int64(h)
		}
		var opt int64
		for _, lengths := range m.Optimizer.Lengths {
			for _, n := range lengths {
				opt += int64(n)
			}
		}
		if m.Epoch < 0 || m.Batch < 0 || m.Step < 0 || m.params.Size != 8*int64(m.Particles)*perParticle || m.opt.Size != 8*opt {
			t.Fatalf("accepted %+v", m)
		}
	})
}

// Load never panics and allocates at most the binary files' sizes (their
// values), 100 times the manifest's and 1 MiB, whatever the files hold.
// With fix set, the target first gives the manifest's file entries the
// sizes and checksums of the binary files, as one who edits a manifest
// with care would, so that the fuzzer reaches the reads.
//
//	go test ./checkpoints -run '^$' -fuzz FuzzLoad -fuzztime 60s
func FuzzLoad(f *testing.F) {
	for _, edit := range append(tamperings, func(map[string]any) {}) {
		manifest, params, opt := fuzzFiles(f, edit)
		f.Add(manifest, params, opt, false)
		f.Add(manifest, params, opt, true)
	}
	dir := f.TempDir() // one per fuzzing process, which runs inputs one at a time
	f.Fuzz(func(t *testing.T, manifest, params, opt []byte, fix bool) {
		if fix {
			manifest = rewrite(manifest, func(m map[string]any) {
				files, _ := m["files"].([]any)
				for i, b := range [][]byte{params, opt} {
					if i < len(files) {
						if entry, ok := files[i].(map[string]any); ok {
							sum := sha256.Sum256(b)
							entry["size"], entry["sha256"] = len(b), hex.EncodeToString(sum[:])
						}
					}
				}
			})
		}
		for name, b := range map[string][]byte{ManifestName: manifest, "p.bin": params, "o.bin": opt} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var c *Checkpoint
		var err error
		n := allocated(func() { c, err = Load(dir) })
		if limit := uint64(len(params)+len(opt)) + 100*uint64(len(manifest)) + 1<<20; n > limit {
			t.Fatalf("Load allocated %d bytes, more than %d", n, limit)
		}
		if err == nil && len(c.Particles) < 1 {
			t.Fatal("loaded a checkpoint without particles")
		}
	})
}
