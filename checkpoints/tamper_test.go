package checkpoints

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// editManifest rewrites dir's manifest through edit.
func editManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	testenv.EditJSON(t, filepath.Join(dir, ManifestName), edit)
}

var set = testenv.SetJSON

// binFile is the path of dir's binary file of role.
func binFile(t *testing.T, dir, role string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, role+"-*.bin"))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s file: %v %v", role, m, err)
	}
	return m[0]
}

// replace puts what make creates where path is.
func replace(t *testing.T, path string, make func(path string) error) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := make(path); err != nil {
		t.Fatal(err)
	}
}

// A tampered checkpoint is refused with an error naming the file and the
// problem, before Load allocates or indexes with the number at fault: no
// panic, no fatal out-of-memory error, no read of an endless file. The
// machine is taken to have 24 GiB.
func TestTamperedCheckpoint(t *testing.T) {
	t.Setenv(sysmem.Env, "24G")
	huge := make([]any, 64)
	for i := range huge {
		huge[i] = map[string]any{"name": "w", "shape": []any{json.Number("2147483647")}}
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"optimizer length 2^61+1", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) {
				set(m, json.Number("2305843009213693953"), "optimizer", "lengths", 0, 0)
			})
		}, "particle 0 has optimizer state lengths [2305843009213693953 13 0]"},
		{"optimizer length 1e12", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { set(m, json.Number("1000000000000"), "optimizer", "lengths", 0, 0) })
		}, "is 352 bytes, but the manifest's layout and optimizer lengths need 8000000000280"},
		{"negative optimizer length", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { set(m, json.Number("-9"), "optimizer", "lengths", 1, 0) })
		}, "particle 1 has optimizer state lengths [-9 13 0]"},
		{"64 tensors of 2^31-1 values", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { set(m, huge, "layout", "trunk") })
		}, "layout: the tensors up to w hold more than 2147483647 values"},
		{"shape of 2^62 values", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) {
				set(m, []any{json.Number("2147483648"), json.Number("2147483648")}, "layout", "heads", 0, 0, "shape")
			})
		}, "layout: tensor h0 has shape [2147483648 2147483648]"},
		{"negative shape", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { set(m, []any{json.Number("-3")}, "layout", "trunk", 1, "shape") })
		}, "layout: tensor b has shape [-3]"},
		{"files of more values than memory", func(t *testing.T, dir string) {
			// Sizes that agree with each other: only the memory stops them.
			editManifest(t, dir, func(m map[string]any) {
				set(m, json.Number("4000000009"), "optimizer", "lengths", 0, 0)
				set(m, json.Number("32000000352"), "files", 1, "size")
			})
		}, "not enough memory: its files hold 29.8 GiB of values, more than the 24.0 GiB this machine has"},
		{"negative batch", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["batch"] = json.Number("-5") })
		}, "position epoch 3, batch -5, step 41: none may be negative"},
		{"negative epoch", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["epoch"] = json.Number("-1") })
		}, "position epoch -1, batch 5, step 41: none may be negative"},
		{"negative step", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["step"] = json.Number("-100") })
		}, "position epoch 3, batch 5, step -100: none may be negative"},
		{"a billion particles", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["particles"] = json.Number("1000000000") })
		}, "1000000000 particles with 2 optimizer length lists"},
		{"file name ..", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { set(m, "..", "files", 0, "name") })
		}, `the manifest names the parameters file "..", not a plain file name`},
		{"parameters: symlink to /dev/zero", func(t *testing.T, dir string) {
			replace(t, binFile(t, dir, "parameters"), func(p string) error { return os.Symlink("/dev/zero", p) })
		}, "not a regular file but a character device"},
		{"manifest: symlink to /dev/zero", func(t *testing.T, dir string) {
			replace(t, filepath.Join(dir, ManifestName), func(p string) error { return os.Symlink("/dev/zero", p) })
		}, "manifest.json: not a regular file but a character device"},
		{"optimizer: a directory", func(t *testing.T, dir string) {
			replace(t, binFile(t, dir, "optimizer"), func(p string) error { return os.Mkdir(p, 0o755) })
		}, "not a regular file but a directory"},
		{"manifest: a directory", func(t *testing.T, dir string) {
			replace(t, filepath.Join(dir, ManifestName), func(p string) error { return os.Mkdir(p, 0o755) })
		}, "manifest.json: not a regular file but a directory"},
		{"manifest: too big", func(t *testing.T, dir string) {
			t.Setenv(sysmem.Env, "64K") // manifests up to 1 KiB
		}, "more than a 64th of this machine's 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Save(dir, sample()); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %v, want one naming %s and saying %q", err, dir, tc.want)
			}
		})
	}
}

// A symlink to a regular file is read as the file (a checkpoint copied
// with cp -s loads); so is everything else Save wrote, unchanged.
func TestSymlinkedFiles(t *testing.T) {
	dir, copied := t.TempDir(), t.TempDir()
	if err := Save(dir, sample()); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(copied, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(copied); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "nothing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}
