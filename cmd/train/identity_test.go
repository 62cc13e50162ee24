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

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// writeLabelled writes a file data set of n 3-feature examples (test:
// n/2) with a classification task, sign, and a regression task, sum:
// .npz archives with standardised inputs, or CSV files with input none.
// flip flips the training split's sign of every other example, leaving
// its inputs, and so the spec's statistics, as they were.
func writeLabelled(t *testing.T, dir, format string, n int, flip bool) {
	t.Helper()
	desc := files.Description{Tasks: []files.TaskSpec{
		{Name: "sign", Kind: "classification", Classes: 2},
		{Name: "sum", Kind: "regression"},
	}}
	if format == "csv" {
		desc.Input = files.None
	}
	if err := files.WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		split string
		n     int
	}{{"train", n}, {"test", n / 2}} {
		x := make([]float32, sp.n*3)
		var y []float64
		csv := "a,b,c,sign,sum\n"
		for i := range sp.n {
			var sum float64
			for f := range 3 {
				v := float32(math.Sin(float64(7*i + 3*f + 100*len(sp.split))))
				x[i*3+f] = v
				sum += float64(v)
			}
			sign := 0
			if (sum > 0) != (flip && sp.split == "train" && i%2 == 0) {
				sign = 1
			}
			y = append(y, float64(sign), sum)
			csv += fmt.Sprintf("%v,%v,%v,%d,%v\n", x[i*3], x[i*3+1], x[i*3+2], sign, sum)
		}
		path := filepath.Join(dir, sp.split+"."+format)
		var err error
		if format == "csv" {
			err = os.WriteFile(path, []byte(csv), 0o644)
		} else {
			err = files.WriteSplit(path, x, []int{sp.n, 3}, y)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// train -resume on a run on your own files refuses, with status 1 and
// naming the file, training data whose content is not what the run
// trained on: labels flipped in train.npz (the inputs' statistics
// unchanged), a label in train.csv under input none. -data DIR names a
// directory the data moved to: the same files resume there, and the
// resumed checkpoint records it; changed files there are refused.
func TestResumeChangedData(t *testing.T) {
	captureLog(t)
	runs, origin := map[string]string{}, map[string]string{}
	for _, format := range []string{"npz", "csv"} {
		dir := t.TempDir()
		writeLabelled(t, dir, format, 60, false)
		runs[format], _ = trainFiles(t, "-data", dir, "-hidden", "8", "-particles", "2", "-epochs", "1", "-batch", "16")
		origin[format] = dir
	}
	for _, tc := range []struct {
		name, format string
		flip, moved  bool
		want         string // "" resumes
	}{
		{"npz", "npz", false, false, ""},
		{"npz flipped", "npz", true, false, "/train.npz has changed since the run started"},
		{"npz moved", "npz", false, true, ""},
		{"npz moved flipped", "npz", true, true, "/train.npz has changed since the run started"},
		{"csv flipped", "csv", true, false, "/train.csv has changed since the run started"},
		{"csv moved", "csv", false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runDir, dataDir := t.TempDir(), filepath.Join(t.TempDir(), "moved")
			testenv.CopyDir(t, filepath.Join(runs[tc.format], "last"), filepath.Join(runDir, "last"))
			testenv.CopyDir(t, origin[tc.format], dataDir)
			args := []string{"-resume", runDir, "-epochs", "2", "-progress=false", "-workers", "1"}
			if tc.moved {
				args = append(args, "-data", dataDir)
			} else {
				// The run's own directory, changed in place.
				testenv.EditJSON(t, filepath.Join(runDir, "last", checkpoints.ManifestName), func(m map[string]any) {
					testenv.SetJSON(m, dataDir, "settings", "files", "dir")
				})
			}
			if tc.flip {
				writeLabelled(t, dataDir, tc.format, 60, true)
			}
			o, err := parseFlags(args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o)
			c, lerr := checkpoints.Load(filepath.Join(runDir, "last"))
			if lerr != nil {
				t.Fatal(lerr)
			}
			s, serr := experiment.ReadSettings(c)
			if serr != nil {
				t.Fatal(serr)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Epoch != 2 || s.Files.Dir != dataDir {
					t.Errorf("resumed to epoch %d reading %s, want 2 and %s", c.Epoch, s.Files.Dir, dataDir)
				}
				return
			}
			if status := cli.Status(err); status != cli.ExitError || !strings.Contains(err.Error(), dataDir+tc.want) {
				t.Errorf("status %d, error %v; want %d and %q", status, err, cli.ExitError, dataDir+tc.want)
			}
			if c.Epoch != 1 {
				t.Errorf("refused, but last/ moved on to epoch %d", c.Epoch)
			}
		})
	}
}
