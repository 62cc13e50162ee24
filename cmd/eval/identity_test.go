package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// writeLabelled writes a file data set of n 3-feature examples (test:
// n/2) in .npz archives, with a classification task, sign, and a
// regression task, sum. flip flips the training split's sign of every
// other example, leaving its inputs, and so the spec's statistics, as
// they were.
func writeLabelled(t *testing.T, dir string, n int, flip bool) {
	t.Helper()
	desc := files.Description{Tasks: []files.TaskSpec{
		{Name: "sign", Kind: "classification", Classes: 2},
		{Name: "sum", Kind: "regression"},
	}}
	if err := files.WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		file string
		n    int
	}{{files.TrainFile, n}, {files.TestFile, n / 2}} {
		x := make([]float32, sp.n*3)
		var y []float64
		for i := range sp.n {
			var sum float64
			for f := range 3 {
				x[i*3+f] = float32(math.Sin(float64(7*i + 3*f + 100*len(sp.file))))
				sum += float64(x[i*3+f])
			}
			sign := 0.0
			if (sum > 0) != (flip && sp.file == files.TrainFile && i%2 == 0) {
				sign = 1
			}
			y = append(y, sign, sum)
		}
		if err := files.WriteSplit(filepath.Join(dir, sp.file), x, []int{sp.n, 3}, y); err != nil {
			t.Fatal(err)
		}
	}
}

// wideColumns is the number of input columns of writeWide's CSV files:
// their spec (names, means, deviations) is some 100 KB of JSON.
const wideColumns = 3000

// writeWide writes train.csv (n rows) and test.csv (n/2) of wideColumns
// standardised inputs and one two-class task; change adds 1 to the
// input of column 1234 of train.csv in every row (any one row may be
// held out for validation, outside the statistics).
func writeWide(t *testing.T, dir string, n int, change bool) {
	t.Helper()
	desc := files.Description{Tasks: []files.TaskSpec{{Name: "label", Kind: "classification", Classes: 2}}}
	if err := files.WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		file string
		n    int
	}{{"train.csv", n}, {"test.csv", n / 2}} {
		var b strings.Builder
		for j := range wideColumns {
			fmt.Fprintf(&b, "input-column-with-a-long-name-%04d,", j)
		}
		b.WriteString("label\n")
		for i := range sp.n {
			for j := range wideColumns {
				v := math.Sin(float64(i*wideColumns + j))
				if change && sp.file == "train.csv" && j == 1234 {
					v++
				}
				fmt.Fprintf(&b, "%.4f,", v)
			}
			fmt.Fprintf(&b, "%d\n", i%2)
		}
		if err := os.WriteFile(filepath.Join(dir, sp.file), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// eval on a run on your own files refuses, naming the file, data whose
// content is not what the run trained on: labels flipped in train.npz
// (the inputs' statistics unchanged), one value of a 3000-column
// train.csv. -data DIR names a directory the data moved to, and the
// same files there give the same figures. A checkpoint written before
// the hashes were recorded evaluates, with a warning, and is refused
// only where the spec changed, naming its field. Every refusal is one
// line under 300 bytes.
func TestEvalChangedData(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	runs, origin := map[string]string{}, map[string]string{}
	for kind, write := range map[string]func(dir string){
		"npz":  func(dir string) { writeLabelled(t, dir, 60, false) },
		"wide": func(dir string) { writeWide(t, dir, 40, false) },
	} {
		dir := t.TempDir()
		write(dir)
		s := experiment.Defaults(files.Name)
		s.Files = &files.Spec{Dir: dir}
		s.Particles, s.Epochs, s.Batch, s.Hidden = 2, 1, 16, "8"
		runs[kind], _ = trainSmall(t, s, "")
		origin[kind] = dir
	}
	evaluate := func(t *testing.T, args ...string) (string, error) {
		t.Helper()
		var stdout bytes.Buffer
		o, err := parseFlags(append(args, "-json", "-workers", "1"), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		err = run(context.Background(), o, &stdout)
		return stdout.String(), err
	}
	before, err := evaluate(t, "-ckpt", runs["npz"])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, kind string
		edit       func(dir string)
		moved, old bool
		want       string // "" evaluates
	}{
		{name: "npz", kind: "npz"},
		{name: "npz flipped", kind: "npz", edit: func(dir string) { writeLabelled(t, dir, 60, true) },
			want: "/train.npz has changed since the run started"},
		{name: "npz moved", kind: "npz", moved: true},
		{name: "npz moved flipped", kind: "npz", moved: true, edit: func(dir string) { writeLabelled(t, dir, 60, true) },
			want: "/train.npz has changed since the run started"},
		{name: "npz old", kind: "npz", old: true},
		{name: "wide changed", kind: "wide", edit: func(dir string) { writeWide(t, dir, 40, true) },
			want: "/train.csv has changed since the run started"},
		{name: "wide old changed", kind: "wide", old: true, edit: func(dir string) { writeWide(t, dir, 40, true) },
			want: " has changed since the run started: input mean[1234] is "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ckpt, dataDir := filepath.Join(t.TempDir(), "last"), filepath.Join(t.TempDir(), "moved")
			testenv.CopyDir(t, filepath.Join(runs[tc.kind], "last"), ckpt)
			testenv.CopyDir(t, origin[tc.kind], dataDir)
			args := []string{"-ckpt", ckpt}
			if tc.moved {
				args = append(args, "-data", dataDir)
			}
			testenv.EditJSON(t, filepath.Join(ckpt, checkpoints.ManifestName), func(m map[string]any) {
				if !tc.moved { // the run's own directory, changed in place
					testenv.SetJSON(m, dataDir, "settings", "files", "dir")
				}
				if tc.old {
					delete(m["settings"].(map[string]any)["files"].(map[string]any), "sha256")
				}
			})
			if tc.edit != nil {
				tc.edit(dataDir)
			}
			logged.Reset()
			got, err := evaluate(t, args...)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "":
				// The same figures, wherever the data are read from.
				if strip(got) != strip(before) {
					t.Errorf("report\n%s\nwant\n%s", got, before)
				}
				if warned := strings.Contains(logged.String(), "records no hashes of its data files"); warned != tc.old {
					t.Errorf("warned %v, want %v: %s", warned, tc.old, logged.String())
				}
			case err == nil || !strings.Contains(err.Error(), dataDir+tc.want):
				t.Errorf("error %v, want one saying %q", err, dataDir+tc.want)
			case len(err.Error()) >= 300 || strings.Contains(err.Error(), "\n"):
				t.Errorf("error of %d bytes, want one line under 300: %s", len(err.Error()), err)
			}
		})
	}
}

// strip removes the report's checkpoint line, which names the
// checkpoint's directory.
func strip(report string) string {
	var keep []string
	for _, l := range strings.Split(report, "\n") {
		if !strings.Contains(l, `"checkpoint":`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
