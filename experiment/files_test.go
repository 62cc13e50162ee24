package experiment

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data/files"
)

// writeVectors writes a file data set of n 3-feature examples (test:
// n/2) with a classification and a regression task.
func writeVectors(t *testing.T, dir string, n int, offset float32) {
	t.Helper()
	desc := files.Description{Tasks: []files.TaskSpec{
		{Name: "sign", Kind: "classification", Classes: 2},
		{Name: "sum", Kind: "regression"},
	}}
	if err := files.WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []struct {
		name string
		n    int
	}{{files.TrainFile, n}, {files.TestFile, n / 2}} {
		x := make([]float32, sp.n*3)
		var y []float64
		for i := range sp.n {
			var sum float64
			for f := range 3 {
				v := float32(math.Sin(float64(7*i+3*f))) + offset
				x[i*3+f] = v
				sum += float64(v)
			}
			sign := 0.0
			if sum > 0 {
				sign = 1
			}
			y = append(y, sign, sum)
		}
		if err := files.WriteSplit(filepath.Join(dir, sp.name), x, []int{sp.n, 3}, y); err != nil {
			t.Fatal(err)
		}
	}
}

func filesSettings(dir string) Settings {
	s := Defaults(files.Name)
	s.Files = &files.Spec{Dir: dir}
	s.Particles, s.Epochs, s.Batch, s.Hidden = 2, 1, 16, "8"
	return s
}

// A run on the file data set records the data's spec (shape, tasks,
// the training split's normalisation) and the model picked from the
// shape in its checkpoint, and restores from it; a training file changed
// since is refused by name.
func TestFilesRecordAndRestore(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	writeVectors(t, dir, 60, 0)
	s := filesSettings(dir)
	d, _, err := LoadData(s, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	rs := r.Settings
	if rs.Model != "mlp" || rs.Files == nil || rs.Files.Input == nil || rs.Files.Input.Kind != files.Standardize ||
		len(rs.Files.Input.Mean) != 3 || rs.Files.Train != 54 || len(rs.Files.Tasks) != 2 {
		t.Fatalf("recorded model %q, files %+v", rs.Model, rs.Files)
	}
	if s.Files.Input != nil {
		t.Error("New wrote into the caller's settings")
	}
	r.Out = out
	if err := r.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	r2, _, err := Open(out, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Settings.Files.Input.Mean[1] != rs.Files.Input.Mean[1] || r2.TrainSet.Len() != 54 {
		t.Errorf("restored files %+v", r2.Settings.Files)
	}
	writeVectors(t, dir, 60, 0.5) // the same shapes, other values
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ReadSettings(c)
	if err != nil {
		t.Fatal(err)
	}
	d2, _, err := LoadData(s2, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(c, d2, 1); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, files.TrainFile)+" has changed since the run started") {
		t.Errorf("restoring on changed files: %v", err)
	}
}

// A -model that cannot take the data is ErrUnfit, naming the shape.
func TestFilesModelUnfit(t *testing.T) {
	dir := t.TempDir()
	writeVectors(t, dir, 20, 0)
	s := filesSettings(dir)
	s.Model, s.Hidden = "lenet", ""
	d, _, err := LoadData(s, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(s, d, 1)
	if !errors.Is(err, ErrUnfit) || !strings.Contains(err.Error(), "lenet: inputs of shape [3], want 1×36×36 images") {
		t.Errorf("lenet on vectors: %v", err)
	}
}

// On a training split smaller than a batch the graphs take the split's
// size, not the batch's (rows beyond it would only be computed and
// weighed zero); a split larger than the graphs is evaluated in several
// batches, every example once.
func TestGraphsFitSmallData(t *testing.T) {
	for _, c := range []struct{ rows, batch, want int }{
		{rows: 12, batch: 16, want: 12},
		{rows: 40, batch: 16, want: 16},
	} {
		dir := t.TempDir()
		writeVectors(t, dir, c.rows, 0)
		s := filesSettings(dir)
		s.Batch, s.Valid = c.batch, 0
		d, _, err := LoadData(s, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(s, d, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Trainer.Config().Batch; got != c.want {
			t.Errorf("%d rows, batch %d: the graphs take %d rows, want %d", c.rows, c.batch, got, c.want)
		}
		out, _, err := r.Trainer.Outputs(context.Background(), d.Train)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(out[1][0]); got != c.rows {
			t.Errorf("%d rows, batch %d: %d regression outputs, want one per row", c.rows, c.batch, got)
		}
	}
}
