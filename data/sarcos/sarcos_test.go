package sarcos

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// Reference values from numpy.quantile (default linear method).
func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		q    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0.9, 3.7},      // np.quantile([1,2,3,4], 0.9)
		{[]float64{4, 1, 3, 2}, 0.5, 2.5},      // order does not matter
		{[]float64{10}, 0.9, 10},               // one value
		{[]float64{-5, 0, 5, 10, 20}, 0.9, 16}, // pos 3.6: 10 + 0.6·10
	} {
		if got := Quantile(tc.v, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", tc.v, tc.q, got, tc.want)
		}
	}
}

// writeCSV writes rows of Columns values, value(i, j) at row i column j.
func writeCSV(t *testing.T, path string, rows int, value func(i, j int) float64) {
	t.Helper()
	var b strings.Builder
	for i := range rows {
		for j := range Columns {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, value(i, j))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The CSV form splits as the protocol says: the first 4,448 rows of
// sarcos_inv are validation, the rest training, sarcos_inv_test the test
// set; targets are divided by their training 90th percentile, inputs kept.
func TestSplitAndScale(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, Subdir), 0o755)
	const extra = 11 // training rows after the validation block
	// Target j of row i is (j+1)·i, so on the training rows
	// (i = 4448..4458) its 90th percentile is (j+1)·(4448 + 0.9·10).
	value := func(i, j int) float64 {
		if j < Inputs {
			return float64(i%7) - 3 + float64(j)/100
		}
		return float64((j - Inputs + 1) * i)
	}
	writeCSV(t, filepath.Join(dir, Subdir, "sarcos_inv.csv"), Validation+extra, value)
	writeCSV(t, filepath.Join(dir, Subdir, "sarcos_inv_test.csv"), 3, value)
	sp, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Valid.Len() != Validation || sp.Train.Len() != extra || sp.Test.Len() != 3 {
		t.Fatalf("splits of %d, %d, %d rows", sp.Valid.Len(), sp.Train.Len(), sp.Test.Len())
	}
	for j := range Targets {
		if want := float64(j+1) * (Validation + 9); math.Abs(sp.Scale[j]-want) > 1e-9 {
			t.Errorf("target %d scale %v, want %v", j, sp.Scale[j], want)
		}
	}
	x, y := make([]float32, Inputs), make([]float32, Targets)
	sp.Train.Example(2, x, y) // row 4450
	if x[3] != float32(value(Validation+2, 3)) || math.Abs(float64(y[6])-7*4450/(7*4457.0)) > 1e-6 {
		t.Errorf("train example 2: x[3] = %v, y[6] = %v", x[3], y[6])
	}
	if len(sp.Train.Tasks()) != Targets || sp.Train.Tasks()[0].Kind != data.Regression || sp.Train.InputShape()[0] != Inputs {
		t.Error("tasks or input shape wrong")
	}
}

func TestErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := Load(dir)
		if !errors.Is(err, data.ErrMissing) || !strings.Contains(err.Error(), filepath.Join(dir, "sarcos", "sarcos_inv.mat")) ||
			!strings.Contains(err.Error(), "sarcos_inv.csv") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("wrong columns", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, Subdir), 0o755)
		os.WriteFile(filepath.Join(dir, Subdir, "sarcos_inv.csv"), []byte("1,2,3\n4,5,6\n"), 0o644)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "a 2×3 matrix, SARCOS has 28 columns") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("not a number", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, Subdir), 0o755)
		os.WriteFile(filepath.Join(dir, Subdir, "sarcos_inv.csv"), []byte("1,2\n3,x\n"), 0o644)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `line 2 column 2: "x" is not a number`) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("corrupt MAT", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, Subdir), 0o755)
		os.WriteFile(filepath.Join(dir, Subdir, "sarcos_inv.mat"), []byte("MATLAB 5.0 MAT-file, but short"), 0o644)
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "sarcos_inv.mat: not a MAT-file") {
			t.Errorf("error %v", err)
		}
	})
}

// The real shapes, written by scipy: 40,036 training, 4,448 validation and
// 4,449 test rows; every input in [−1, 1] as the fixture draws them.
func TestScipyFixture(t *testing.T) {
	dir := testenv.SarcosFixture(t)
	sp, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Train.Len() != 40036 || sp.Valid.Len() != 4448 || sp.Test.Len() != 4449 {
		t.Fatalf("splits of %d, %d, %d rows", sp.Train.Len(), sp.Valid.Len(), sp.Test.Len())
	}
	x, y := make([]float32, Inputs), make([]float32, Targets)
	for i := range sp.Train.Len() {
		sp.Train.Example(i, x, y)
		for _, v := range x {
			if v < -1 || v > 1 {
				t.Fatalf("row %d input %v outside [-1, 1]", i, v)
			}
		}
	}
	for j, s := range sp.Scale {
		if !(s > 0) {
			t.Errorf("target %d scale %v", j, s)
		}
	}
}
