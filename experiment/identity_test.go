package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// writeVectorsCSV writes the data of writeVectors as train.csv and
// test.csv, with input none: no statistics in the spec that a change
// could show.
func writeVectorsCSV(t *testing.T, dir string, n int) {
	t.Helper()
	desc := files.Description{Input: files.None, Tasks: []files.TaskSpec{
		{Name: "sign", Kind: "classification", Classes: 2},
		{Name: "sum", Kind: "regression"},
	}}
	if err := files.WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		name string
		n    int
	}{{"train.csv", n}, {"test.csv", n / 2}} {
		var b strings.Builder
		b.WriteString("a,b,c,sign,sum\n")
		for i := range sp.n {
			var sum float64
			for f := range 3 {
				v := math.Sin(float64(7*i + 3*f))
				sum += v
				fmt.Fprintf(&b, "%g,", v)
			}
			fmt.Fprintf(&b, "%d,%g\n", map[bool]int{false: 0, true: 1}[sum > 0], sum)
		}
		if err := os.WriteFile(filepath.Join(dir, sp.name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// flipLabels rewrites train.npz of writeVectors(dir, n, 0) with every
// other sign flipped: the inputs, and so the spec's statistics, are
// unchanged.
func flipLabels(t *testing.T, dir string, n int) {
	t.Helper()
	x := make([]float32, n*3)
	var y []float64
	for i := range n {
		var sum float64
		for f := range 3 {
			v := float32(math.Sin(float64(7*i + 3*f)))
			x[i*3+f] = v
			sum += float64(v)
		}
		sign := 0.0
		if (sum > 0) != (i%2 == 0) {
			sign = 1
		}
		y = append(y, sign, sum)
	}
	if err := files.WriteSplit(filepath.Join(dir, files.TrainFile), x, []int{n, 3}, y); err != nil {
		t.Fatal(err)
	}
}

// A restored run on the file data set reads its data where the
// checkpoint says, or where filesDir says if the data moved, and is
// refused, naming the file, where a file's content is not the one the
// run trained on: labels flipped (which leave the spec as it was), a
// CSV file under input none. A checkpoint written before the hashes were
// recorded restores on the same data, and on changed labels too (only
// the spec is compared).
func TestFilesIdentity(t *testing.T) {
	trained, origin := trainFilesRuns(t)
	for _, tc := range []struct {
		name   string
		kind   string
		edit   func(t *testing.T, dir string)
		moved  bool // given as filesDir; else at the checkpoint's directory
		old    bool // the checkpoint records no hashes
		want   string
		wantIs error
	}{
		{name: "npz as trained", kind: "npz"},
		{name: "npz moved", kind: "npz", moved: true},
		{name: "npz labels flipped", kind: "npz", edit: func(t *testing.T, dir string) { flipLabels(t, dir, 60) },
			want: "/train.npz has changed since the run started", wantIs: files.ErrChanged},
		{name: "npz moved, labels flipped", kind: "npz", moved: true, edit: func(t *testing.T, dir string) { flipLabels(t, dir, 60) },
			want: "/train.npz has changed since the run started", wantIs: files.ErrChanged},
		{name: "npz inputs changed", kind: "npz", edit: func(t *testing.T, dir string) { writeVectors(t, dir, 60, 0.5) },
			want: "/train.npz has changed since the run started", wantIs: files.ErrChanged},
		{name: "npz gone", kind: "npz", edit: func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, want: "is not there; if it has moved, name it with -data DIR"},
		{name: "csv as trained", kind: "csv"},
		{name: "csv moved", kind: "csv", moved: true},
		{name: "csv input none, a label", kind: "csv", edit: flipCSVLabel,
			want: "/train.csv has changed since the run started", wantIs: files.ErrChanged},
		{name: "old checkpoint", kind: "npz", old: true},
		{name: "old checkpoint, labels flipped", kind: "npz", old: true, edit: func(t *testing.T, dir string) { flipLabels(t, dir, 60) }},
		{name: "old checkpoint, inputs changed", kind: "npz", old: true, edit: func(t *testing.T, dir string) { writeVectors(t, dir, 60, 0.5) },
			want: " has changed since the run started: input mean[0] is ", wantIs: files.ErrChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ckpt := filepath.Join(t.TempDir(), "last")
			testenv.CopyDir(t, filepath.Join(trained[tc.kind], "last"), ckpt)
			dataDir := filepath.Join(t.TempDir(), "data")
			testenv.CopyDir(t, origin[tc.kind], dataDir)
			filesDir := ""
			testenv.EditJSON(t, filepath.Join(ckpt, checkpoints.ManifestName), func(m map[string]any) {
				if !tc.moved {
					testenv.SetJSON(m, dataDir, "settings", "files", "dir")
				}
				if tc.old {
					delete(m["settings"].(map[string]any)["files"].(map[string]any), "sha256")
				}
			})
			if tc.moved {
				filesDir = dataDir
			}
			if tc.edit != nil {
				tc.edit(t, dataDir)
			}
			r, _, err := OpenFiles(ckpt, "", filesDir, Components{}, 1)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
				if r.Settings.Files.Dir != dataDir {
					t.Errorf("restored run reads %s, want %s", r.Settings.Files.Dir, dataDir)
				}
				if tc.old != (r.Settings.Files.SHA256 == nil) {
					t.Errorf("restored hashes %v", r.Settings.Files.SHA256)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dataDir):
				t.Errorf("error %v, want one naming %s and saying %q", err, dataDir, tc.want)
			case tc.wantIs != nil && !errors.Is(err, tc.wantIs):
				t.Errorf("error %v does not wrap %v", err, tc.wantIs)
			case len(err.Error()) > 300 || strings.Contains(err.Error(), "\n"):
				t.Errorf("error of %d bytes, want one line under 300: %s", len(err.Error()), err)
			}
		})
	}
}

// filesDir names the directory of a run on the file data set: given
// for another data set, it is refused.
func TestMoveFilesOtherDataset(t *testing.T) {
	s := Defaults("multi-mnist")
	if err := s.moveFiles("/some/dir"); err == nil || !strings.Contains(err.Error(), "-data /some/dir names the directory of a run on your own files; this run's data set is multi-mnist") {
		t.Errorf("error %v", err)
	}
	if err := s.moveFiles(""); err != nil || s.Files != nil {
		t.Errorf("no directory: %v, files %+v", err, s.Files)
	}
}

// trainFilesRuns trains a run on file data of each kind, npz and csv,
// and returns by kind the run's output directory and the directory it
// trained on.
func trainFilesRuns(t *testing.T) (trained, origin map[string]string) {
	trained, origin = map[string]string{}, map[string]string{}
	for kind, write := range map[string]func(t *testing.T, dir string){
		"npz": func(t *testing.T, dir string) { writeVectors(t, dir, 60, 0) },
		"csv": func(t *testing.T, dir string) { writeVectorsCSV(t, dir, 60) },
	} {
		dir, out := t.TempDir(), t.TempDir()
		write(t, dir)
		s := filesSettings(dir)
		d, _, err := LoadData(s, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(s, d, 1)
		if err != nil {
			t.Fatal(err)
		}
		r.Out = out
		if err := r.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		trained[kind], origin[kind] = out, dir
	}
	return trained, origin
}

// flipCSVLabel flips the label of one row of dir/train.csv, a column
// the files' spec does not describe (input none).
func flipCSVLabel(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	f := strings.Split(lines[5], ",")
	f[3] = map[string]string{"0": "1", "1": "0"}[f[3]]
	lines[5] = strings.Join(f, ",")
	if err := os.WriteFile(filepath.Join(dir, "train.csv"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
