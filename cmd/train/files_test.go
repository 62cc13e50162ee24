package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/data/multimnist"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// exportMultiMNIST writes the first n composites of each Multi-MNIST
// split (seed 1, the default validation split) to a file data set in
// dir, as bytes with input "unit": what the built-in data set reads.
func exportMultiMNIST(t *testing.T, dir string, n int) {
	t.Helper()
	dataDir, err := data.Dir("")
	if err != nil {
		t.Fatal(err)
	}
	train, valid, test, err := multimnist.Variants[0].LoadValid(dataDir, 1, experiment.DefaultValid)
	testenv.CheckData(t, err)
	desc := files.Description{Input: files.Unit, Tasks: []files.TaskSpec{
		{Name: "top-left", Kind: "classification", Classes: 10},
		{Name: "bottom-right", Kind: "classification", Classes: 10},
	}}
	if err := files.WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		file string
		set  *multimnist.Set
	}{{files.TrainFile, train}, {files.ValidFile, valid}, {files.TestFile, test}} {
		var x []byte
		var y []float64
		for i := range n {
			x = append(x, sp.set.Image(i)...)
			a, b := sp.set.Labels(i)
			y = append(y, float64(a), float64(b))
		}
		if err := files.WriteSplit(filepath.Join(dir, sp.file), x, []int{n, 1, multimnist.Side, multimnist.Side}, y); err != nil {
			t.Fatal(err)
		}
	}
}

// trainFiles runs train with args and returns its metrics lines without
// the time taken.
func trainFiles(t *testing.T, args ...string) (out string, lines []map[string]any) {
	t.Helper()
	out = t.TempDir()
	o, err := parseFlags(append(args, "-out", out, "-progress=false", "-workers", "1"), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		testenv.CheckData(t, err)
	}
	for _, l := range metricsLines(t, out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "seconds")
		lines = append(lines, m)
	}
	return out, lines
}

// Multi-MNIST composites exported to .npz train through -data to the
// same figures, to the last digit, as the built-in data set with the same
// seed and limits: the same examples in the same order, read as the same
// float32 values, the same initialisation and shuffling. (The built-in
// run's validation split is its first 200 held-out composites, which the
// export writes as valid.npz.)
func TestFilesMatchBuiltIn(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks on real data")
	}
	const n = 200
	dir := t.TempDir()
	exportMultiMNIST(t, dir, n)
	common := []string{"-particles", "2", "-epochs", "2", "-batch", "64", "-seed", "1", "-lr", "0.01",
		"-optimizer", "sgd", "-lr-schedule", "multistep", "-lr-milestones", "1"}
	_, builtIn := trainFiles(t, append([]string{"-dataset", "multi-mnist", "-train-limit", "200", "-test-limit", "200"}, common...)...)
	out, mine := trainFiles(t, append([]string{"-data", dir}, common...)...)
	if len(builtIn) != 8 {
		t.Fatalf("%d metrics lines, want 2 epochs × 2 splits × 2 tasks", len(builtIn))
	}
	if !reflect.DeepEqual(builtIn, mine) {
		t.Errorf("figures differ:\nbuilt-in %v\nfiles    %v", builtIn, mine)
	}
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.ReadSettings(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dataset != files.Name || s.Model != "lenet" || s.Files.Dir != dir || s.Files.Input.Kind != files.Unit || s.Files.Train != n {
		t.Errorf("checkpoint settings: dataset %s, model %s, files %+v", s.Dataset, s.Model, s.Files)
	}
}

// writeSarcosLike writes a SARCOS-shaped regression data set: 21 inputs
// x ~ U(−1, 1), 7 targets sin(x·A) + ½·x_j·x_{j+7} for a fixed random A.
func writeSarcosLike(t *testing.T, dir string, train, test int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var a [21][7]float64
	for i := range a {
		for j := range a[i] {
			a[i][j] = rng.NormFloat64() / 3
		}
	}
	var tasks []files.TaskSpec
	for j := range 7 {
		tasks = append(tasks, files.TaskSpec{Name: "torque" + string(rune('1'+j)), Kind: "regression"})
	}
	if err := files.WriteDescription(dir, files.Description{Tasks: tasks}); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		file string
		n    int
	}{{files.TrainFile, train}, {files.TestFile, test}} {
		x := make([]float64, sp.n*21)
		y := make([]float64, sp.n*7)
		for i := range sp.n {
			row := x[i*21 : (i+1)*21]
			for k := range row {
				row[k] = 2*rng.Float64() - 1
			}
			for j := range 7 {
				var dot float64
				for k := range 21 {
					dot += row[k] * a[k][j]
				}
				y[i*7+j] = math.Sin(dot) + row[j]*row[j+7]/2
			}
		}
		if err := files.WriteSplit(filepath.Join(dir, sp.file), x, []int{sp.n, 21}, y); err != nil {
			t.Fatal(err)
		}
	}
}

// A regression data set written as float64 .npz trains with -model mlp
// and -hidden: one MSE line per task, split and epoch, falling over the
// epochs, and the checkpoint records the MLP's widths.
func TestFilesRegressionMLP(t *testing.T) {
	dir := t.TempDir()
	writeSarcosLike(t, dir, 600, 200)
	out, lines := trainFiles(t, "-data", dir, "-model", "mlp", "-hidden", "32,32", "-particles", "2", "-epochs", "3",
		"-batch", "32", "-lr", "0.003", "-seed", "2")
	if len(lines) != 3*2*7 {
		t.Fatalf("%d metrics lines, want 3 epochs × 2 splits × 7 tasks", len(lines))
	}
	mse := map[float64]float64{} // epoch → mean test MSE
	for _, l := range lines {
		v, ok := l["mse"].(float64)
		if !ok || math.IsNaN(v) {
			t.Fatalf("line without an MSE: %v", l)
		}
		if l["split"] == "test" {
			mse[l["epoch"].(float64)] += v / 7
		}
	}
	if !(mse[3] < mse[1]) {
		t.Errorf("test MSE by epoch %v: does not fall", mse)
	}
	c, err := checkpoints.Load(filepath.Join(out, "best"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.ReadSettings(c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "mlp" || s.Hidden != "32,32" || len(c.Layout.Trunk) != 4 || c.Layout.Trunk[0].Shape[0] != 21 || c.Layout.Trunk[0].Shape[1] != 32 {
		t.Errorf("model %s, hidden %q, trunk %+v", s.Model, s.Hidden, c.Layout.Trunk)
	}
}

// Bad data and a model that cannot take it are status 2 (bad input), the
// message naming the file, the array and the index; flags that cannot go
// together are refused before anything loads.
func TestFilesBadInput(t *testing.T) {
	dir := t.TempDir()
	writeSarcosLike(t, dir, 40, 20)
	nan := t.TempDir()
	writeSarcosLike(t, nan, 40, 20)
	x := make([]float32, 40*21)
	x[5*21+3] = float32(math.NaN())
	if err := files.WriteSplit(filepath.Join(nan, files.TrainFile), x, []int{40, 21}, make([]float64, 40*7)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"NaN input", []string{"-data", nan}, "train.npz: array x: example 5, element 3 is NaN"},
		{"lenet on vectors", []string{"-data", dir, "-model", "lenet"}, "lenet: inputs of shape [21], want 1×36×36 images"},
		{"no directory", []string{"-data", filepath.Join(dir, "none")}, "tasks.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(append(tc.args, "-out", t.TempDir(), "-progress=false", "-epochs", "1"), &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			captureLog(t)
			err = run(context.Background(), o)
			status := cli.Status(err)
			want := cli.ExitUsage
			if tc.name == "no directory" {
				want = cli.ExitError // missing data, as for the built-in sets
			}
			if status != want || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("status %d, error %v; want %d and %q", status, err, want, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", dir, "-dataset", "sarcos"}, "-data DIR trains on the files in DIR; it cannot be given with -dataset sarcos"},
		{[]string{"-dataset", "files"}, "-dataset files needs -data DIR"},
		{[]string{"-data", dir, "-model", "vgg"}, `-model "vgg" is not one of lenet, mlp, resnet18`},
		{[]string{"-data", dir, "-model", "lenet", "-hidden", "8"}, "-hidden sizes the mlp's layers; the model is lenet"},
		{[]string{"-data", dir, "-hidden", "8,0"}, `-hidden "8,0"`},
		{[]string{"-dataset", "mog3", "-data", dir}, "-data DIR trains on the files in DIR; it cannot be given with -dataset mog3"},
	} {
		_, err := parseFlags(tc.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
