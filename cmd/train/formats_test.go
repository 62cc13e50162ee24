package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
)

// formats holds data directories as NumPy, pandas and R write them
// (data/files/testdata/formats/make_fixtures.py).
var formats, _ = filepath.Abs("../../data/files/testdata/formats")

// lastTest is the last epoch's test metric of task, and whether there
// was one.
func lastTest(lines []map[string]any, task, metric string) (float64, bool) {
	v, epoch, ok := 0.0, -1.0, false
	for _, l := range lines {
		if l["split"] != "test" || l["task"] != task {
			continue
		}
		if e := l["epoch"].(float64); e > epoch {
			v, ok = l[metric].(float64)
			epoch = e
		}
	}
	return v, ok
}

// majority is the share of the most frequent label of column in a CSV
// file, among the rows that have one.
func majority(t *testing.T, path, column string, sep rune) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = sep
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	c := -1
	for i, name := range recs[0] {
		if strings.TrimPrefix(name, "\uFEFF") == column {
			c = i
		}
	}
	counts := map[string]int{}
	n, most := 0, 0
	for _, rec := range recs[1:] {
		if v := rec[c]; v != "" && v != "NA" {
			counts[v]++
			n++
			most = max(most, counts[v])
		}
	}
	return float64(most) / float64(n)
}

// Files as users write them train to completion through train: NumPy's
// savez of a pandas frame's to_numpy() (Fortran order), of int64 inputs
// and a boolean target, of float16; pandas' to_csv with its index, or
// with ";" and a byte-order mark; R's write.csv by default (its NA input
// imputed) and with -missing drop. A
// fifth of the species labels of the CSV files are missing, and the
// species is still learnt: test accuracy well above the majority class.
// The value task's test MSE is in the data's units (thousands: an MSE
// in the hundred thousands, not below 1).
func TestFormatsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	common := []string{"-model", "mlp", "-hidden", "32", "-particles", "2", "-epochs", "8", "-batch", "32", "-lr", "0.01", "-seed", "3"}
	testMajority := majority(t, filepath.Join(formats, "pandas-index", "test.csv"), "species", ',')
	for _, tc := range []struct {
		dir   string
		args  []string
		tasks []string
		value bool // has the value task
	}{
		{"npz-fortran", nil, []string{"species", "value"}, true},
		{"npz-int", nil, []string{"is_cat"}, false},
		{"npz-half", nil, []string{"species"}, false},
		{"pandas-index", nil, []string{"species", "value"}, true},
		{"pandas-semicolon", nil, []string{"species", "value"}, true},
		{"r-write-csv", []string{"-missing", "drop"}, []string{"species", "value"}, true},
		{"r-write-csv", nil, []string{"species", "value"}, true}, // the default: NA imputed
	} {
		t.Run(tc.dir, func(t *testing.T) {
			out, lines := trainFiles(t, append(append([]string{"-data", filepath.Join(formats, tc.dir)}, common...), tc.args...)...)
			for _, task := range tc.tasks {
				metric := "accuracy"
				if task == "value" {
					metric = "mse"
				}
				v, ok := lastTest(lines, task, metric)
				switch {
				case !ok || math.IsNaN(v):
					t.Fatalf("no test %s for task %s: %v", metric, task, lines)
				case task == "species" && v < testMajority+0.2:
					t.Errorf("species test accuracy %.3f, the majority class's %.3f", v, testMajority)
				case task == "is_cat" && v < 0.8:
					t.Errorf("is_cat test accuracy %.3f", v)
				case task == "value" && (v < 1e3 || v > 3e5):
					// The value's variance is about 400,000; its noise's 1,600.
					t.Errorf("value test MSE %.4g: not in the data's units, or not learnt", v)
				}
			}
			c, err := checkpoints.Load(filepath.Join(out, "last"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := experiment.ReadSettings(c)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Files.Targets["value"]; ok != tc.value {
				t.Errorf("recorded target scales %v", s.Files.Targets)
			}
		})
	}
	// R's NA input under -missing refuse is bad input that names the
	// file, the line and the column.
	o, err := parseFlags([]string{"-data", filepath.Join(formats, "r-write-csv"), "-missing", "refuse", "-out", t.TempDir(), "-progress=false", "-epochs", "1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	captureLog(t)
	err = run(context.Background(), o)
	if status := cli.Status(err); status != cli.ExitUsage || !strings.Contains(err.Error(), `r-write-csv/train.csv: line 5, column "x2": a missing value ("NA")`) {
		t.Errorf("status %d, error %v", status, err)
	}
}

// thousands writes a data directory of 4 inputs ~ N(0, 1) and the tasks
// kinds names: "class", three classes from the inputs; "value", 4200 +
// 800·(sin(2·x0) + x1·x2/2) + noise (σ 30), or, with zscore, that value
// standardised with the training split's mean and deviation, which it
// returns (the deviation 1 without).
func thousands(t *testing.T, dir string, names []string, zscore bool) (std float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	var descs []files.TaskSpec
	for _, n := range names {
		if n == "class" {
			descs = append(descs, files.TaskSpec{Name: n, Kind: "classification", Classes: 3})
		} else {
			descs = append(descs, files.TaskSpec{Name: n, Kind: "regression"})
		}
	}
	if err := files.WriteDescription(dir, files.Description{Tasks: descs}); err != nil {
		t.Fatal(err)
	}
	type split struct {
		file string
		x    []float64
		y    [][2]float64
	}
	splits := []*split{{file: files.TrainFile}, {file: files.ValidFile}, {file: files.TestFile}}
	for k, n := range []int{800, 200, 400} {
		sp := splits[k]
		for range n {
			x := [4]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			sp.x = append(sp.x, x[:]...)
			class := 0.0
			switch {
			case x[0]+x[3] > 0.5:
				class = 2
			case x[1]-x[3] > 0:
				class = 1
			}
			value := 4200 + 800*(math.Sin(2*x[0])+x[1]*x[2]/2) + 30*rng.NormFloat64()
			sp.y = append(sp.y, [2]float64{class, value})
		}
	}
	mean, std := 0.0, 1.0
	if zscore {
		var sum, sq float64
		for _, y := range splits[0].y {
			sum += y[1]
		}
		mean = sum / float64(len(splits[0].y))
		for _, y := range splits[0].y {
			sq += (y[1] - mean) * (y[1] - mean)
		}
		std = math.Sqrt(sq / float64(len(splits[0].y)))
	}
	for _, sp := range splits {
		var y []float64
		for _, row := range sp.y {
			for _, n := range names {
				if n == "class" {
					y = append(y, row[0])
				} else {
					y = append(y, (row[1]-mean)/std)
				}
			}
		}
		if err := files.WriteSplit(filepath.Join(dir, sp.file), sp.x, []int{len(sp.y), 4}, y); err != nil {
			t.Fatal(err)
		}
	}
	return std
}

// A regression target in thousands trains as well as the same target
// z-scored by hand (test MSE in the data's units within 10 %): targets
// are standardised by default, the loss computed on that scale and every
// MSE reported in the data's units. With -standardize-targets=false the
// same run fits the thousands far worse in as many epochs.
func TestStandardizedTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	common := []string{"-model", "mlp", "-hidden", "32,32", "-particles", "2", "-epochs", "6", "-batch", "32", "-lr", "0.003", "-seed", "4"}
	raw, byHand := t.TempDir(), t.TempDir()
	thousands(t, raw, []string{"value"}, false)
	std := thousands(t, byHand, []string{"value"}, true)
	_, lines := trainFiles(t, append([]string{"-data", raw}, common...)...)
	mse, _ := lastTest(lines, "value", "mse")
	_, lines = trainFiles(t, append([]string{"-data", byHand, "-standardize-targets=false"}, common...)...)
	zMSE, _ := lastTest(lines, "value", "mse")
	want := zMSE * std * std
	t.Logf("test MSE: standardised by default %.5g, z-scored by hand %.5g (%.5g in the data's units), deviation %.4g", mse, zMSE, want, std)
	if math.Abs(mse-want) > 0.1*want {
		t.Errorf("test MSE %.5g in the data's units, z-scored by hand %.5g: more than 10 %% apart", mse, want)
	}
	if mse > 0.5*std*std {
		t.Errorf("test MSE %.5g: not learnt (the targets' variance is %.5g)", mse, std*std)
	}
	_, lines = trainFiles(t, append([]string{"-data", raw, "-standardize-targets=false"}, common...)...)
	rawMSE, _ := lastTest(lines, "value", "mse")
	t.Logf("test MSE on the thousands as they are: %.5g", rawMSE)
	if rawMSE < 2*mse {
		t.Errorf("unstandardised test MSE %.5g, standardised %.5g: standardising should help", rawMSE, mse)
	}
}

// Under -method linear (the tasks' losses summed), a regression task in
// thousands beside a classification task leaves the classification as
// good as it is alone: its targets are standardised, so its loss does
// not swamp the cross-entropy.
func TestMixedTasksLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	common := []string{"-method", "linear", "-model", "mlp", "-hidden", "32,32", "-particles", "2", "-epochs", "6", "-batch", "32", "-lr", "0.003", "-seed", "5"}
	alone, mixed := t.TempDir(), t.TempDir()
	thousands(t, alone, []string{"class"}, false)
	thousands(t, mixed, []string{"class", "value"}, false)
	_, lines := trainFiles(t, append([]string{"-data", alone}, common...)...)
	accAlone, _ := lastTest(lines, "class", "accuracy")
	_, lines = trainFiles(t, append([]string{"-data", mixed}, common...)...)
	accMixed, _ := lastTest(lines, "class", "accuracy")
	mse, _ := lastTest(lines, "value", "mse")
	t.Logf("class test accuracy alone %.4f, beside the value %.4f (value test MSE %.5g)", accAlone, accMixed, mse)
	if accMixed < accAlone-0.05 || accMixed < 0.7 {
		t.Errorf("class test accuracy %.4f beside the value task, %.4f alone", accMixed, accAlone)
	}
}
