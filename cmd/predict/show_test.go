package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
)

// The grid keeps the 16 highest values, highest first, the earlier
// example first among equals.
func TestTopMI(t *testing.T) {
	top, err := newTopMI([]int{1, 2, 2}, []data.Task{{Name: "r", Kind: data.Regression}, {Name: "c", Kind: data.Classification, Classes: 2}}, "")
	if err != nil || top.task != 1 {
		t.Fatalf("task %v, %v", top, err)
	}
	calls := 0
	for i := range 40 {
		mi := float64((i * 7) % 20) // 0..19, each twice
		top.offer(i, mi, make([]float32, 4), func() []string { calls++; return nil })
	}
	if len(top.keep) != showCount {
		t.Fatalf("kept %d", len(top.keep))
	}
	for k, s := range top.keep {
		if want := float64(19 - k/2); s.mi != want {
			t.Errorf("place %d: mi %v, want %v", k, s.mi, want)
		}
		if k%2 == 1 && s.index < top.keep[k-1].index {
			t.Errorf("places %d, %d: examples %d, %d: the later first", k-1, k, top.keep[k-1].index, s.index)
		}
	}
	if calls >= 40 {
		t.Errorf("labels asked for all %d examples", calls)
	}
	for _, tc := range []struct {
		shape []int
		task  string
	}{{[]int{5}, ""}, {[]int{2, 4, 4}, ""}, {[]int{1, 4, 4}, "r"}, {[]int{1, 4, 4}, "nope"}} {
		if _, err := newTopMI(tc.shape, []data.Task{{Name: "r", Kind: data.Regression}}, tc.task); err == nil {
			t.Errorf("%v, task %q: no error", tc.shape, tc.task)
		}
	}
}

// -show on images writes a PNG of a 4×4 grid; on vectors it is status 2.
func TestShow(t *testing.T) {
	dir, runDir := t.TempDir(), t.TempDir()
	desc := files.Description{Input: files.Unit, Tasks: []files.TaskSpec{{Name: "bright", Kind: "classification", Classes: 3, ClassNames: []string{"dark", "mid", "light"}}}}
	if err := files.WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	n := 60
	x := make([]byte, n*36)
	y := make([]float64, n)
	for i := range n {
		for p := range 36 {
			x[i*36+p] = byte((i*37 + p*11) % 256)
		}
		y[i] = float64(int(x[i*36]) * 3 / 256)
	}
	for _, f := range []string{files.TrainFile, files.TestFile} {
		if err := files.WriteSplit(filepath.Join(dir, f), x, []int{n, 6, 6}, y); err != nil {
			t.Fatal(err)
		}
	}
	s := experiment.Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Particles, s.Epochs, s.Batch, s.Hidden = 2, 1, 16, "8"
	d, _, err := experiment.LoadData(s, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := experiment.New(s, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = runDir
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	show := filepath.Join(out, "top.png")
	o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, files.TestFile), "-out", filepath.Join(out, "p.npz"), "-show", show, "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(show)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 4*(26*7+16) || b.Dy() != 4*(6*4+2*14+16) {
		t.Errorf("grid of %v", b)
	}
	for _, args := range [][]string{{"-show-task", "x"}, {"-show", "a.jpg"}} {
		if _, err := parseFlags(append([]string{"-ckpt", "c", "-data", "d.npz", "-out", "p.csv"}, args...), &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
