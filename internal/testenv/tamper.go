package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A Tampering damages a checkpoint directory in one of the ways that once
// made eval -ckpt and train -resume panic, run out of memory or read
// forever; the commands must refuse it with an error saying Want.
type Tampering struct {
	Name   string
	Damage func(t testing.TB, dir string)
	Want   string
}

// Tamperings lists them. They edit a checkpoint of at least one particle
// and one head, whose manifest names a parameters and an optimizer file.
func Tamperings() []Tampering {
	manifest := func(edit func(m map[string]any)) func(testing.TB, string) {
		return func(t testing.TB, dir string) { EditJSON(t, filepath.Join(dir, "manifest.json"), edit) }
	}
	parameters := func(make func(path string) error) func(testing.TB, string) {
		return func(t testing.TB, dir string) {
			t.Helper()
			files, _ := filepath.Glob(filepath.Join(dir, "parameters-*.bin"))
			if len(files) != 1 {
				t.Fatalf("%s: parameters files %v", dir, files)
			}
			if err := os.Remove(files[0]); err != nil {
				t.Fatal(err)
			}
			if err := make(files[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	huge := make([]any, 64)
	for i := range huge {
		huge[i] = map[string]any{"name": "w", "shape": []any{json.Number("2147483647")}}
	}
	return []Tampering{
		{"optimizer length 2^61+1", manifest(func(m map[string]any) {
			SetJSON(m, json.Number("2305843009213693953"), "optimizer", "lengths", 0, 0)
		}), "has optimizer state lengths [2305843009213693953"},
		{"optimizer length 1e12", manifest(func(m map[string]any) {
			SetJSON(m, json.Number("1000000000000"), "optimizer", "lengths", 0, 0)
		}), "but the manifest's layout and optimizer lengths need 8000000"},
		{"64 tensors of 2^31-1 values", manifest(func(m map[string]any) { SetJSON(m, huge, "layout", "trunk") }),
			"hold more than 2147483647 values"},
		{"batch -5", manifest(func(m map[string]any) { m["batch"] = -5 }), "batch -5"},
		{"epoch -1", manifest(func(m map[string]any) { m["epoch"] = -1 }), "none may be negative"},
		{"step -100", manifest(func(m map[string]any) { m["step"] = -100 }), "none may be negative"},
		{"batch 99999", manifest(func(m map[string]any) { m["batch"] = 99999 }), "batch 99999 is past the "},
		{"settings: batch 1e8", manifest(func(m map[string]any) { SetJSON(m, 100_000_000, "settings", "batch") }),
			"not enough memory: -batch 100000000: the run needs at least "},
		{"parameters: symlink to /dev/zero", parameters(func(p string) error { return os.Symlink("/dev/zero", p) }),
			"not a regular file but a character device"},
		{"parameters: a directory", parameters(func(p string) error { return os.Mkdir(p, 0o755) }),
			"not a regular file but a directory"},
	}
}
