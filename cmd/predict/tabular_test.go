package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// readCSVFile reads a whole CSV file.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// trainFiles trains a small MLP ensemble on the file data set in dir.
func trainFiles(t *testing.T, dir string, set func(*experiment.Settings)) string {
	t.Helper()
	dst := t.TempDir()
	s := experiment.Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Hidden, s.LR, s.Seed, s.Particles, s.Epochs, s.Batch = "16", 0.01, 3, 3, 3, 32
	if set != nil {
		set(&s)
	}
	d, _, err := experiment.LoadData(s, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := experiment.New(s, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = dst
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dst
}

// On a table as pandas writes it (index and id columns, string class
// labels): pred.csv has the id column, in the input's order, and each
// classification task's class name beside its label; -show, which
// draws images, is a warning, and the CSV is still written.
func TestPredictTable(t *testing.T) {
	dir := t.TempDir()
	testenv.CopyDir(t, filepath.Join("..", "..", "data", "files", "testdata", "formats", "pandas-index"), dir)
	runDir := trainFiles(t, dir, nil)
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	out := t.TempDir()
	pred, show := filepath.Join(out, "pred.csv"), filepath.Join(out, "top.png")
	o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, "new.csv"), "-out", pred, "-show", show, "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(show); err == nil {
		t.Error("-show drew tabular inputs")
	}
	if !strings.Contains(logged.String(), "-show draws images") {
		t.Errorf("no warning about -show:\n%s", logged.String())
	}
	in, got := readCSVFile(t, filepath.Join(dir, "new.csv")), readCSVFile(t, pred)
	head := got[0]
	id, class, label := slices.Index(head, "id"), slices.Index(head, "species/class"), slices.Index(head, "species/label")
	if id != 1 || class != label+1 || label < 0 {
		t.Fatalf("header %q: want index, id, …, species/label, species/class", head)
	}
	inID := slices.Index(in[0], "id")
	names := map[string]bool{}
	train := readCSVFile(t, filepath.Join(dir, "train.csv"))
	for _, row := range train[1:] {
		names[row[slices.Index(train[0], "species")]] = true
	}
	if len(got) != len(in) {
		t.Fatalf("%d rows predicted for %d", len(got)-1, len(in)-1)
	}
	for e := 1; e < len(got); e++ {
		if got[e][id] != in[e][inID] {
			t.Errorf("row %d: id %q, input's %q", e, got[e][id], in[e][inID])
		}
		if !names[got[e][class]] {
			t.Errorf("row %d: class %q is not one of the training labels %v", e, got[e][class], names)
		}
	}
}

// The regression std is the particles' spread and the noise the
// validation MSE measures: on held-out data whose noise grows with |x|
// (y = 2x + (0.3 + 0.4|x|)·ε), ±1 std covers between 55 % and 80 % of the
// targets (68 % for a calibrated Gaussian); the spread alone covers far
// fewer.
func TestRegressionStdCovers(t *testing.T) {
	dir := t.TempDir()
	if err := files.WriteDescription(dir, files.Description{Input: files.None, Tasks: []files.TaskSpec{{Name: "y", Kind: "regression"}}}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	write := func(name string, n int) ([]float32, []float64) {
		x, y := make([]float32, n), make([]float64, n)
		for i := range n {
			v := rng.Float64()*4 - 2
			x[i], y[i] = float32(v), 2*v+(0.3+0.4*math.Abs(v))*rng.NormFloat64()
		}
		if err := files.WriteSplit(filepath.Join(dir, name), x, []int{n, 1}, y); err != nil {
			t.Fatal(err)
		}
		return x, y
	}
	write(files.TrainFile, 1000)
	write(files.ValidFile, 300)
	_, y := write("new.npz", 1000)
	runDir := trainFiles(t, dir, func(s *experiment.Settings) { s.Epochs = 20 })
	pred := filepath.Join(t.TempDir(), "pred.npz")
	o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, "new.npz"), "-out", pred, "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	mean, _ := readNPZ(t, pred, "y/mean")
	std, _ := readNPZ(t, pred, "y/std")
	spread, _ := readNPZ(t, pred, "y/spread")
	within := func(sd []float64) float64 {
		n := 0
		for e := range y {
			if math.Abs(y[e]-mean[e]) <= sd[e] {
				n++
			}
		}
		return float64(n) / float64(len(y))
	}
	cover, spreadCover := within(std), within(spread)
	t.Logf("±1 std covers %.3f, ±1 spread %.3f", cover, spreadCover)
	if cover < 0.55 || cover > 0.80 {
		t.Errorf("±1 std covers %.3f of the targets, want 0.55 to 0.80", cover)
	}
	if !(spreadCover < cover) {
		t.Errorf("the spread alone covers %.3f, not less than the std's %.3f", spreadCover, cover)
	}
}
