package files

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/internal/testenv"
)

// Load records the SHA-256 of tasks.json and of every split's file, by
// name, once each (a held-out validation split shares train.npz).
func TestLoadRecordsHashes(t *testing.T) {
	dir := vectors(t, twoTasks, 40)
	d, err := Load(dir, Options{Valid: AutoValid, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, name := range []string{TasksFile, TrainFile, TestFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		want[name] = hex.EncodeToString(sum[:])
	}
	if fmt.Sprint(d.Spec.SHA256) != fmt.Sprint(want) {
		t.Errorf("hashes %v, want %v", d.Spec.SHA256, want)
	}
}

// A file whose content changed is named, however little changed and
// whether or not the spec shows it: labels flipped leave the inputs'
// statistics as they were, and under input none or unit there are no
// statistics at all. The same files in another directory agree.
func TestAgreesNamesChangedFile(t *testing.T) {
	npzDir := vectors(t, twoTasks, 40)
	csvDir := t.TempDir()
	testenv.CopyDir(t, filepath.Join("testdata", "identity"), csvDir)
	for _, tc := range []struct {
		name string
		dir  string
		edit func(t *testing.T, dir string)
		want string // "" agrees
	}{
		{"npz as written", npzDir, func(*testing.T, string) {}, ""},
		{"npz moved", npzDir, func(*testing.T, string) {}, ""},
		{"npz labels flipped", npzDir, func(t *testing.T, dir string) {
			x := make([]float32, 40*4)
			var y []float64
			for i := range 40 {
				for f := range 4 {
					x[i*4+f] = float32(i + 10*f) // the inputs as vectors writes them
				}
				y = append(y, float64((i+1)%3), float64(i)/10)
			}
			if err := WriteSplit(filepath.Join(dir, TrainFile), x, []int{40, 4}, y); err != nil {
				t.Fatal(err)
			}
		}, "/train.npz has changed since the run started (SHA-256 "},
		{"npz test split added as valid.npz", npzDir, func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(dir, TestFile), filepath.Join(dir, ValidFile))
		}, "/valid.npz was added since the run started"},
		{"tasks.json renamed a class", npzDir, func(t *testing.T, dir string) {
			desc := twoTasks
			desc.Tasks = []TaskSpec{{Name: "digit", Kind: "classification", Classes: 3, ClassNames: []string{"a", "b", "c"}}, desc.Tasks[1]}
			if err := WriteDescription(dir, desc); err != nil {
				t.Fatal(err)
			}
		}, "/tasks.json has changed since the run started"},
		{"csv as written", csvDir, func(*testing.T, string) {}, ""},
		{"csv input none, one label", csvDir, func(t *testing.T, dir string) {
			replaceIn(t, filepath.Join(dir, "train.csv"), "4,2,5", "4,1,5")
		}, "/train.csv has changed since the run started"},
		{"csv input none, one input of the test split", csvDir, func(t *testing.T, dir string) {
			replaceIn(t, filepath.Join(dir, "test.csv"), "5,2,6", "5,2,7")
		}, "/test.csv has changed since the run started"},
		{"csv replaced by npz", csvDir, func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "test.csv")); err != nil {
				t.Fatal(err)
			}
			if err := WriteSplit(filepath.Join(dir, TestFile), []float32{2, 2, 5, 6}, []int{2, 2}, []float64{1, 0.75, 2, 1.25}); err != nil {
				t.Fatal(err)
			}
		}, "/test.csv, which the run read, is no longer there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := Load(tc.dir, Options{Valid: AutoValid, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			moved := filepath.Join(t.TempDir(), "moved")
			testenv.CopyDir(t, tc.dir, moved)
			tc.edit(t, moved)
			after, err := Load(moved, Options{Valid: AutoValid, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			err = after.Spec.Agrees(&before.Spec)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), moved+tc.want) || !errors.Is(err, ErrChanged):
				t.Errorf("error %v, want ErrChanged saying %q", err, moved+tc.want)
			case len(err.Error()) > 300 || strings.Contains(err.Error(), "\n"):
				t.Errorf("error of %d bytes, want one line under 300: %s", len(err.Error()), err)
			}
		})
	}
}

// Without recorded hashes (a checkpoint written before they were), the
// spec alone is compared, and its first differing field is named in one
// short line, however long the spec: a 3000-column CSV's spec is some
// 100 KB of JSON.
func TestAgreesNamesField(t *testing.T) {
	const cols = 3000
	base := func() *Spec {
		s := &Spec{Dir: "/data/wide", Shape: []int{cols}, Tasks: twoTasks.Tasks,
			Input: &Normalization{Kind: Standardize, Mean: make([]float64, cols), Std: make([]float64, cols)},
			Train: 900, Valid: 100, Columns: make([]string, cols)}
		for i := range cols {
			s.Input.Mean[i], s.Input.Std[i] = float64(i)/7, 1+float64(i)/3
			s.Columns[i] = fmt.Sprintf("feature-%04d-%s", i, strings.Repeat("x", 200))
		}
		return s
	}
	for _, tc := range []struct {
		name string
		edit func(now, rec *Spec)
		want string // "" agrees
	}{
		{"same", func(now, rec *Spec) {}, ""},
		{"another directory", func(now, rec *Spec) { now.Dir = "/elsewhere" }, ""},
		{"hashes recorded only now", func(now, rec *Spec) { now.SHA256 = map[string]string{TrainFile: "ab"} }, ""},
		{"hashes differ", func(now, rec *Spec) {
			now.SHA256, rec.SHA256 = map[string]string{"train.csv": "ab", TasksFile: "cd"}, map[string]string{"train.csv": "af", TasksFile: "cd"}
		}, "/data/wide/train.csv has changed since the run started (SHA-256 ab now, the run recorded af)"},
		{"a mean", func(now, rec *Spec) { now.Input.Mean[2999] += 1e-12 },
			"/data/wide has changed since the run started: input mean[2999] is 428.42857142857247 now, the run recorded 428.42857142857144"},
		{"a std", func(now, rec *Spec) { now.Input.Std[7] = 2 }, "input std[7] is 2 now, the run recorded 3.333"},
		{"a column", func(now, rec *Spec) { now.Columns[1500] = "renamed" },
			`columns[1500] is "renamed" now, the run recorded "feature-1500-xxxxxxxxxxxxxxxxxxxxxxxxxxx"…`},
		{"a column more", func(now, rec *Spec) { now.Columns = append(now.Columns, "extra") }, "columns has 3001 elements now, the run recorded 3000"},
		{"shape", func(now, rec *Spec) { now.Shape = []int{1, 3000} }, "input_shape is 1×3000 now, the run recorded 3000"},
		{"input kind", func(now, rec *Spec) { now.Input = &Normalization{Kind: None} }, `input is "none" now, the run recorded "standardize"`},
		{"a task less", func(now, rec *Spec) { now.Tasks = now.Tasks[:1] }, "tasks.json names 1 tasks now, the run recorded 2"},
		{"task name", func(now, rec *Spec) {
			now.Tasks = []TaskSpec{{Name: "d", Kind: "classification", Classes: 3}, rec.Tasks[1]}
		}, `tasks[0].name is "d" now, the run recorded "digit"`},
		{"classes", func(now, rec *Spec) {
			now.Tasks = []TaskSpec{{Name: "digit", Kind: "classification", Classes: 4}, rec.Tasks[1]}
		}, `task "digit"'s classes is 4 now, the run recorded 3`},
		{"class names", func(now, rec *Spec) {
			now.Tasks = []TaskSpec{{Name: "digit", Kind: "classification", Classes: 3, ClassNames: []string{"a", "b", "c"}}, rec.Tasks[1]}
		}, `task "digit"'s class_names has 3 elements now, the run recorded 0`},
		{"task kind", func(now, rec *Spec) {
			now.Tasks = []TaskSpec{rec.Tasks[0], {Name: "size", Kind: "classification", Classes: 2}}
		}, `task "size"'s kind is "classification" now, the run recorded "regression"`},
		{"training examples", func(now, rec *Spec) { now.Train = 901 }, "train_examples is 901 now, the run recorded 900"},
		{"validation examples", func(now, rec *Spec) { now.Valid = 0 }, "valid_examples is 0 now, the run recorded 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now, rec := base(), base()
			tc.edit(now, rec)
			err := now.Agrees(rec)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrChanged):
				t.Errorf("error %v, want ErrChanged saying %q", err, tc.want)
			case len(err.Error()) > 300 || strings.Contains(err.Error(), "\n"):
				t.Errorf("error of %d bytes, want one line under 300: %s", len(err.Error()), err)
			}
		})
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// replaceIn replaces old by new, once, in the file at path.
func replaceIn(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s holds no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
