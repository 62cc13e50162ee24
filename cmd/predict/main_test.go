package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/data/npz"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/metrics"
)

var tasks = []files.TaskSpec{
	{Name: "quadrant", Kind: "classification", Classes: 4},
	{Name: "big", Kind: "classification", Classes: 2},
	{Name: "norm", Kind: "regression"},
}

// example i's 5 features and targets.
func example(i int) ([]float32, []float64) {
	x := make([]float32, 5)
	var norm float64
	for f := range x {
		x[f] = float32(math.Sin(float64(3*i+7*f)) * 2)
		norm += float64(x[f]) * float64(x[f])
	}
	q := 0.0
	if x[0] > 0 {
		q++
	}
	if x[1] > 0 {
		q += 2
	}
	big := 0.0
	if norm > 8 {
		big = 1
	}
	return x, []float64{q, big, math.Sqrt(norm)}
}

func writeSet(t *testing.T, path string, from, n int) {
	t.Helper()
	var x []float32
	var y []float64
	for i := from; i < from+n; i++ {
		xi, yi := example(i)
		x, y = append(x, xi...), append(y, yi...)
	}
	if err := files.WriteSplit(path, x, []int{n, 5}, y); err != nil {
		t.Fatal(err)
	}
}

// trained trains three MLP particles for two epochs on a file data set
// and returns the data directory and the run directory.
func trained(t *testing.T) (dir, run string) {
	t.Helper()
	dir, run, _ = trainOn(t, 160, 53, func(s *experiment.Settings) {
		// 32 held out: enough for the validation MSE to be the noise.
		s.Particles, s.Epochs, s.Batch, s.Valid = 3, 2, 16, 32
	})
	return dir, run
}

// trainOn trains an MLP (hidden width 16) on the first n examples as
// train.npz and m others as test.npz, with the settings set changes, and
// returns the data and run directories and the finished run.
func trainOn(t *testing.T, n, m int, set func(*experiment.Settings)) (dir, run string, r *experiment.Run) {
	t.Helper()
	dir, run = t.TempDir(), t.TempDir()
	if err := files.WriteDescription(dir, files.Description{Tasks: tasks}); err != nil {
		t.Fatal(err)
	}
	writeSet(t, filepath.Join(dir, files.TrainFile), 0, n)
	writeSet(t, filepath.Join(dir, files.TestFile), max(1000, 2*n), m) // past the training examples
	s := experiment.Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Hidden, s.LR, s.Seed = "16", 0.01, 5
	set(&s)
	d, _, err := experiment.LoadData(s, "")
	if err != nil {
		t.Fatal(err)
	}
	if r, err = experiment.New(s, d, 1); err != nil {
		t.Fatal(err)
	}
	r.Out = run
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, run, r
}

// readNPZ reads the float64 (or int64) array name of path.
func readNPZ(t *testing.T, path, name string) ([]float64, []int) {
	t.Helper()
	f, err := npz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := f.Array(name)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	v := make([]float64, a.Len)
	if err := a.ReadFloat64(v); err != nil {
		t.Fatal(err)
	}
	return v, a.Shape
}

// predict's probabilities on a run's test file are eval's ensemble's: the
// ensemble scores eval computes (accuracy, Brier, ECE, NLL, confidence;
// MSE) follow from them to 1e-9, and they equal, to 1e-9, the mean of
// the particles' probabilities on the test split as eval loads it. Its
// entropies and mutual information agree with a brute-force computation
// from those particle probabilities, and the CSV holds the NPZ's
// numbers. A chunk of 7 examples, not dividing the batch of 16, checks
// the streaming.
func TestPredictMatchesEval(t *testing.T) {
	dir, runDir := trained(t)
	out := t.TempDir()
	csvPath, npzPath := filepath.Join(out, "p.csv"), filepath.Join(out, "p.npz")
	o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, files.TestFile), "-out", csvPath, "-out", npzPath,
		"-chunk", "7", "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	// What eval does: open the checkpoint with its data, evaluate.
	r, _, err := experiment.Open(runDir, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	set, err := r.Split("test", -1)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := r.Trainer.Evaluate(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	// The particles' own probabilities, per task: [task][particle][example·C].
	parts := make([][][]float64, len(tasks))
	var labels [][]float64
	for range tasks {
		labels = append(labels, nil)
	}
	for j := range parts {
		parts[j] = make([][]float64, 3)
	}
	err = r.Trainer.Predict(context.Background(), set, func(b *data.Batch, pred [][][]float64) error {
		for j := range pred {
			for i := range pred[j] {
				parts[j][i] = append(parts[j][i], pred[j][i]...)
			}
			for _, y := range b.Targets[j] {
				labels[j] = append(labels[j], float64(y))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 53
	close := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol || math.IsNaN(got) {
			t.Errorf("%s: predict %v, eval %v", what, got, want)
		}
	}
	for j, task := range tasks {
		if task.Kind == "regression" {
			mean, _ := readNPZ(t, npzPath, task.Name+"/mean")
			std, _ := readNPZ(t, npzPath, task.Name+"/std")
			spread, _ := readNPZ(t, npzPath, task.Name+"/spread")
			// The noise term: the validation MSE the run recorded at its
			// epoch.
			noise := math.NaN()
			for _, l := range r.History() {
				if l.Epoch == r.Epoch() && l.Split == "valid" && l.Task == task.Name {
					noise = l.MSE
				}
			}
			if math.IsNaN(noise) {
				t.Fatalf("the run records no validation MSE for %s", task.Name)
			}
			reg, err := metrics.Regress(mean, labels[j])
			if err != nil {
				t.Fatal(err)
			}
			close(task.Name+" MSE", reg.MSE, scores[j].Ensemble.MSE, 1e-9)
			for e := range n {
				var m, sq float64
				for i := range 3 {
					m += parts[j][i][e] / 3
				}
				for i := range 3 {
					sq += (parts[j][i][e] - m) * (parts[j][i][e] - m) / 3
				}
				close("spread", spread[e], math.Sqrt(sq), 1e-12)
				close("std", std[e], math.Sqrt(sq+noise), 1e-12)
			}
			continue
		}
		c := task.Classes
		probs, shape := readNPZ(t, npzPath, task.Name+"/probs")
		if len(shape) != 2 || shape[0] != n || shape[1] != c {
			t.Fatalf("%s/probs of shape %v, want [%d %d]", task.Name, shape, n, c)
		}
		ints := make([]int, n)
		for e := range n {
			ints[e] = int(labels[j][e])
		}
		got, err := metrics.Classify(probs, ints, c)
		if err != nil {
			t.Fatal(err)
		}
		want := scores[j].Ensemble.Classification
		close(task.Name+" accuracy", got.Accuracy, want.Accuracy, 1e-9)
		close(task.Name+" Brier", got.Brier, want.Brier, 1e-9)
		close(task.Name+" ECE", got.ECE, want.ECE, 1e-9)
		close(task.Name+" NLL", got.NLL, want.NLL, 1e-9)
		close(task.Name+" confidence", got.Confidence, want.Confidence, 1e-9)

		label, _ := readNPZ(t, npzPath, task.Name+"/label")
		conf, _ := readNPZ(t, npzPath, task.Name+"/confidence")
		pe, _ := readNPZ(t, npzPath, task.Name+"/predictive_entropy")
		ee, _ := readNPZ(t, npzPath, task.Name+"/expected_entropy")
		mi, _ := readNPZ(t, npzPath, task.Name+"/mutual_information")
		positive := 0
		for e := range n {
			// Brute force, in float64, from the particles' probabilities.
			var h, expected float64
			best := 0
			for k := range c {
				var p float64
				for i := range 3 {
					p += parts[j][i][e*c+k]
				}
				p /= 3
				close("probability", probs[e*c+k], p, 1e-9)
				if p > probs[e*c+best]+1e-15 && k != best {
					best = k
				}
				if p > 0 {
					h -= p * math.Log(p)
				}
				for i := range 3 {
					if q := parts[j][i][e*c+k]; q > 0 {
						expected -= q * math.Log(q) / 3
					}
				}
			}
			close("predictive entropy", pe[e], h, 1e-12)
			close("expected entropy", ee[e], expected, 1e-12)
			close("mutual information", mi[e], h-expected, 1e-12)
			if mi[e] < 0 || mi[e] > math.Log(3)+1e-12 {
				t.Errorf("example %d: mutual information %v outside [0, log 3]", e, mi[e])
			}
			if mi[e] > 1e-6 {
				positive++
			}
			if int(label[e]) != best || conf[e] != probs[e*c+int(label[e])] {
				t.Errorf("example %d: label %v confidence %v, want %d, %v", e, label[e], conf[e], best, probs[e*c+best])
			}
		}
		if positive == 0 {
			t.Errorf("%s: the particles never disagree; the test checks nothing", task.Name)
		}
	}

	// The CSV: a header and one row per example, the NPZ's numbers.
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantHead := "index,quadrant/p0,quadrant/p1,quadrant/p2,quadrant/p3,quadrant/label,quadrant/confidence,quadrant/predictive_entropy," +
		"quadrant/expected_entropy,quadrant/mutual_information,big/p0,big/p1,big/label,big/confidence,big/predictive_entropy," +
		"big/expected_entropy,big/mutual_information,norm/mean,norm/std,norm/spread"
	if len(rows) != n+1 || strings.Join(rows[0], ",") != wantHead {
		t.Fatalf("%d rows, header %q", len(rows), strings.Join(rows[0], ","))
	}
	probs, _ := readNPZ(t, npzPath, "quadrant/probs")
	mi, _ := readNPZ(t, npzPath, "big/mutual_information")
	std, _ := readNPZ(t, npzPath, "norm/std")
	for e := range n {
		row := rows[e+1]
		for col, want := range map[int]float64{0: float64(e), 3: probs[e*4+2], 16: mi[e], 18: std[e]} {
			if got, err := strconv.ParseFloat(row[col], 64); err != nil || got != want {
				t.Fatalf("row %d column %s: %q, the NPZ has %v", e, rows[0][col], row[col], want)
			}
		}
	}
}

// Bad command lines and bad inputs are status 2 with a message naming
// the flag, or the file, the array and the index; a missing checkpoint
// is status 1.
func TestBadInput(t *testing.T) {
	dir, runDir := trained(t)
	tmp := t.TempDir()
	write := func(name string, x any, shape []int) string {
		path := filepath.Join(tmp, name)
		if err := files.WriteSplit(path, x, shape, nil); err != nil {
			t.Fatal(err)
		}
		return path
	}
	nanX := make([]float32, 10)
	nanX[7] = float32(math.NaN())
	truncated := filepath.Join(tmp, "truncated.npz")
	b, err := os.ReadFile(filepath.Join(dir, files.TestFile))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	huge := filepath.Join(tmp, "huge.npz")
	{
		f, _ := os.Create(huge)
		w := npz.NewWriter(f)
		out, _ := w.Create("x", "<f4", []int{1 << 38, 4})
		out.Write(make([]byte, 64))
		w.Close()
		f.Close()
	}
	// A checkpoint of a run on a data set of its own (package
	// experiment/ckptfixture), not on files.
	fixture := filepath.Join("..", "..", "experiment", "ckptfixture", "testdata", "mtsgd-adam")
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		want   string
	}{
		{"wrong shape", []string{"-data", write("shape.npz", make([]float32, 12), []int{3, 4})}, 2, "shape.npz: array x: shape [3 4]: the model was trained on N×5 inputs"},
		{"wrong dtype", []string{"-data", write("dtype.npz", make([]float64, 10), []int{2, 5})}, 0, ""},
		{"NaN", []string{"-data", write("nan.npz", nanX, []int{2, 5})}, 2, "nan.npz: array x: example 1, element 2 is NaN"},
		{"truncated", []string{"-data", truncated}, 2, "truncated.npz: not a .npz (zip) archive, or truncated"},
		{"2^40-element header", []string{"-data", huge}, 2, "huge.npz: array x: truncated: shape [274877906944 4] of float32 needs 4398046511104 bytes"},
		{"no checkpoint", []string{"-data", filepath.Join(dir, files.TestFile), "-ckpt", filepath.Join(tmp, "none")}, 1, "none"},
		{"built-in run", []string{"-data", filepath.Join(dir, files.TestFile), "-ckpt", fixture}, 2, "predict reads checkpoints of runs on your own files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-ckpt", runDir, "-out", filepath.Join(t.TempDir(), "p.csv"), "-progress=false"}, tc.args...)
			o, err := parseFlags(args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o)
			if got := cli.Status(err); got != tc.status || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("status %d, error %v; want %d and %q", got, err, tc.status, tc.want)
			}
			if tc.status != 0 {
				if _, err := os.Stat(o.Out[0]); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s written after an error", o.Out[0])
				}
			}
		})
	}
	// uint8 inputs for a float-trained model are read as numbers too
	// ("wrong dtype" above is float64 for float32: fine), and so is an
	// int64 x.
	f, _ := os.Create(filepath.Join(tmp, "int.npz"))
	w := npz.NewWriter(f)
	out, _ := w.Create("x", "<i8", []int{1, 5})
	out.Write(make([]byte, 40))
	w.Close()
	f.Close()
	o, _ := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(tmp, "int.npz"), "-out", filepath.Join(tmp, "p.npz"), "-progress=false"}, &bytes.Buffer{})
	if err := run(context.Background(), o); err != nil {
		t.Errorf("int64 inputs: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-data", "x.npz", "-out", "p.csv"}, "-ckpt is required"},
		{[]string{"-ckpt", "c", "-out", "p.csv"}, "-data is required"},
		{[]string{"-ckpt", "c", "-data", "x.npz"}, "-out is required"},
		{[]string{"-ckpt", "c", "-data", "x.npz", "-out", "p.txt"}, "-out p.txt: the name must end in .csv or .npz"},
		{[]string{"-ckpt", "c", "-data", "x.npz", "-out", "a.csv", "-out", "b.csv"}, "two .csv files"},
		{[]string{"-ckpt", "c", "-data", "x.npz", "-out", "a.csv", "-chunk", "0"}, "-chunk must be at least 1"},
	} {
		if _, err := parseFlags(tc.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The same inputs as a CSV file (task columns among them, ignored) give
// the same predictions, to the bit, as the archive.
func TestCSVInputs(t *testing.T) {
	dir, runDir := trained(t)
	out := t.TempDir()
	var b strings.Builder
	b.WriteString("f0,f1,quadrant,f2,f3,f4\n")
	for i := 1000; i < 1053; i++ {
		x, _ := example(i)
		fmt.Fprintf(&b, "%s,%s,9,%s,%s,%s\n", f32(x[0]), f32(x[1]), f32(x[2]), f32(x[3]), f32(x[4]))
	}
	csvIn := filepath.Join(out, "new.csv")
	if err := os.WriteFile(csvIn, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{filepath.Join(dir, files.TestFile), csvIn} {
		o, err := parseFlags([]string{"-ckpt", runDir, "-data", in, "-out", filepath.Join(out, filepath.Base(in)+".npz"), "-progress=false"}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := readNPZ(t, filepath.Join(out, "test.npz.npz"), "quadrant/probs")
	c, _ := readNPZ(t, filepath.Join(out, "new.csv.npz"), "quadrant/probs")
	if len(a) != 53*4 || !slices.Equal(a, c) {
		t.Errorf("CSV predictions differ from the archive's")
	}
}

func f32(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// A run whose validation split is large enough records temperatures, and
// predict applies them: its probabilities are those of -temperature=false
// at the checkpoint's temperatures (softmax(log p̄ / T)), the labels and
// the three entropies unchanged.
func TestTemperatureApplied(t *testing.T) {
	// A tenth of 1,200, 120 examples, validates.
	dir, runDir, r := trainOn(t, 1200, 40, func(s *experiment.Settings) {
		s.Particles, s.Epochs, s.Batch = 2, 1, 64
	})
	temps := r.Temperatures()
	if len(temps) != 3 || temps[2] != 1 || (temps[0] == 1 && temps[1] == 1) {
		t.Fatalf("temperatures %v: want one per task, 1 for the regression task, some other than 1", temps)
	}
	out := t.TempDir()
	predict := func(name string, args ...string) string {
		path := filepath.Join(out, name)
		o, err := parseFlags(append([]string{"-ckpt", runDir, "-data", filepath.Join(dir, files.TestFile), "-out", path, "-progress=false"}, args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		return path
	}
	scaled, raw := predict("scaled.npz"), predict("raw.npz", "-temperature=false")
	for j, task := range tasks[:2] {
		p, _ := readNPZ(t, scaled, task.Name+"/probs")
		q, _ := readNPZ(t, raw, task.Name+"/probs")
		want := make([]float64, len(q))
		metrics.Temper(want, q, task.Classes, temps[j])
		for i := range p {
			if math.Abs(p[i]-want[i]) > 1e-12 {
				t.Fatalf("%s/probs[%d]: %v, raw %v at T = %v gives %v", task.Name, i, p[i], q[i], temps[j], want[i])
			}
		}
		conf, _ := readNPZ(t, scaled, task.Name+"/confidence")
		for _, col := range []string{"/label", "/predictive_entropy", "/mutual_information"} {
			a, _ := readNPZ(t, scaled, task.Name+col)
			b, _ := readNPZ(t, raw, task.Name+col)
			if !slices.Equal(a, b) {
				t.Errorf("%s%s differs with temperature scaling", task.Name, col)
			}
		}
		labels, _ := readNPZ(t, scaled, task.Name+"/label")
		for e, v := range labels {
			if l := int(v); conf[e] != p[e*task.Classes+l] {
				t.Fatalf("%s example %d: confidence %v, probability of its label %v", task.Name, e, conf[e], p[e*task.Classes+l])
			}
		}
	}
}
