package checkpoints

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sample is a checkpoint of two particles with a 2-tensor trunk, two
// one-tensor heads and one batch norm's statistics, values chosen so that
// any misplaced number shows, and one optimiser state still empty.
func sample() *Checkpoint {
	layout := Layout{
		Trunk: []Tensor{{"w", []int{2, 3}}, {"b", []int{3}}},
		Heads: [][]Tensor{{{"h0", []int{3, 2}}}, {{"h1", []int{3}}}},
		Stats: []Tensor{{"bn.running_mean", []int{1, 2, 1, 1}}, {"bn.running_var", []int{1, 2, 1, 1}}},
	}
	c := &Checkpoint{
		Settings: json.RawMessage(`{"dataset":"multi-mnist","seed":7}`),
		Epoch:    3, Batch: 5, Step: 41,
		Metrics: json.RawMessage(`[{"task":"top-left","accuracy":0.5}]`),
		Layout:  layout,
	}
	v := 0.0
	vec := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			v += 1.25
			out[i] = v
		}
		return out
	}
	for range 2 {
		c.Particles = append(c.Particles, Particle{
			Trunk: vec(9), Heads: [][]float64{vec(6), vec(3)}, Stats: vec(4),
			TrunkOpt: vec(9), HeadOpts: [][]float64{vec(13), nil},
		})
	}
	c.Particles[1].Trunk[4] = math.Inf(-1) // stored bit for bit like any float
	return c
}

func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "last")
	c := sample()
	if err := Save(dir, c); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Empty optimiser states come back as empty slices.
	c.Particles[0].HeadOpts[1], c.Particles[1].HeadOpts[1] = []float64{}, []float64{}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("loaded\n%+v\nsaved\n%+v", got, c)
	}
	// A second save with new values replaces the files; the old ones go.
	c.Particles[0].Trunk[0] = -1
	c.Epoch = 4
	if err := Save(dir, c); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d files after the second save, want manifest + 2", len(entries))
	}
	if got, err = Load(dir); err != nil || got.Epoch != 4 || got.Particles[0].Trunk[0] != -1 {
		t.Errorf("second save: %v, epoch %d", err, got.Epoch)
	}
}

// A model without batch normalisation has no statistics: none are
// written and none come back.
func TestRoundTripWithoutStats(t *testing.T) {
	dir := t.TempDir()
	c := sample()
	c.Layout.Stats = nil
	for i := range c.Particles {
		c.Particles[i].Stats = nil
		c.Particles[i].HeadOpts[1] = []float64{}
	}
	if err := Save(dir, c); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("loaded\n%+v\nsaved\n%+v", got, c)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	if strings.Contains(string(raw), `"stats"`) {
		t.Errorf("manifest names statistics the model does not have:\n%s", raw)
	}
}

func TestLayoutEqual(t *testing.T) {
	a := sample().Layout
	if err := a.Equal(sample().Layout); err != nil {
		t.Error(err)
	}
	b := sample().Layout
	b.Heads[0][0].Shape = []int{3, 3}
	if err := a.Equal(b); err == nil || err.Error() != "head 0 tensor 0 is h0 [3 2], not h0 [3 3]" {
		t.Errorf("error %v", err)
	}
}

// Each kind of damage gives its own error, naming the file.
func TestCorruption(t *testing.T) {
	paramsFile := func(dir string) string {
		m, _ := filepath.Glob(filepath.Join(dir, "parameters-*.bin"))
		return m[0]
	}
	editManifest := func(dir string, edit func(map[string]any)) {
		p := filepath.Join(dir, ManifestName)
		b, _ := os.ReadFile(p)
		var m map[string]any
		json.Unmarshal(b, &m)
		edit(m)
		b, _ = json.Marshal(m)
		os.WriteFile(p, b, 0o644)
	}
	tests := []struct {
		name   string
		damage func(dir string)
		want   string
	}{
		{"flipped byte", func(dir string) {
			p := paramsFile(dir)
			b, _ := os.ReadFile(p)
			b[17] ^= 0x40
			os.WriteFile(p, b, 0o644)
		}, "the file is damaged"},
		{"truncated file", func(dir string) {
			p := paramsFile(dir)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-8], 0o644)
		}, "bytes, the manifest says"},
		{"missing file", func(dir string) { os.Remove(paramsFile(dir)) }, "missing: the manifest names it as the parameters file"},
		{"wrong shape", func(dir string) {
			editManifest(dir, func(m map[string]any) {
				m["layout"].(map[string]any)["trunk"].([]any)[1].(map[string]any)["shape"] = []int{4}
			})
		}, "but the manifest's layout and optimizer lengths need"},
		{"newer version", func(dir string) { editManifest(dir, func(m map[string]any) { m["version"] = 2 }) },
			"format version 2 is newer than this program reads (1)"},
		{"not a checkpoint", func(dir string) { editManifest(dir, func(m map[string]any) { m["format"] = "zip" }) },
			`format "zip", not a mtsgd-checkpoint`},
		{"manifest truncated", func(dir string) {
			p := filepath.Join(dir, ManifestName)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, "not valid JSON"},
		{"no manifest", func(dir string) { os.Remove(filepath.Join(dir, ManifestName)) }, "no checkpoint here (missing manifest.json)"},
		{"file name escapes", func(dir string) {
			editManifest(dir, func(m map[string]any) { m["files"].([]any)[0].(map[string]any)["name"] = "../x.bin" })
		}, "not a plain file name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Save(dir, sample()); err != nil {
				t.Fatal(err)
			}
			tc.damage(dir)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("damaged checkpoint loaded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not say %q and name the file", err, tc.want)
			}
		})
	}
}

// A checkpoint that does not fit its own layout is refused when saving.
func TestSaveRefusesMismatch(t *testing.T) {
	c := sample()
	c.Particles[1].Heads[0] = c.Particles[1].Heads[0][:5]
	if err := Save(t.TempDir(), c); err == nil || !strings.Contains(err.Error(), "particle 1 head 0 has 5 values, the layout 6") {
		t.Errorf("error %v", err)
	}
}

// LoadManifest reads what Load reads but the values, without opening the
// binary files: a checkpoint whose parameters are gone still gives its
// settings and position.
func TestLoadManifest(t *testing.T) {
	dir := t.TempDir()
	c := sample()
	if err := Save(dir, c); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != ManifestName {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	got, err := LoadManifest(dir)
	c.Particles = nil
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("LoadManifest: %v\n%+v\nwant\n%+v", err, got, c)
	}
	if _, err := LoadManifest(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no checkpoint here") {
		t.Errorf("an empty directory: %v", err)
	}
}
