package files

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/npz"
)

var twoTasks = Description{Tasks: []TaskSpec{
	{Name: "digit", Kind: "classification", Classes: 3},
	{Name: "size", Kind: "regression"},
}}

// vectors writes a directory of n 4-feature examples in train.npz (and
// test.npz of n/2), feature f of example i being i+10f, targets (i mod
// 3, i/10).
func vectors(t *testing.T, desc Description, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	write := func(name string, n int) {
		x := make([]float32, n*4)
		y := make([]float64, 0, 2*n)
		for i := range n {
			for f := range 4 {
				x[i*4+f] = float32(i + 10*f)
			}
			y = append(y, float64(i%3), float64(i)/10)
		}
		if err := WriteSplit(filepath.Join(dir, name), x, []int{n, 4}, y); err != nil {
			t.Fatal(err)
		}
	}
	write(TrainFile, n)
	write(TestFile, n/2)
	return dir
}

func TestLoadVectors(t *testing.T) {
	dir := vectors(t, twoTasks, 50)
	d, err := Load(dir, Options{Valid: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 40 || d.Valid.Len() != 10 || d.Test.Len() != 25 {
		t.Fatalf("splits of %d, %d, %d; want 40, 10, 25", d.Train.Len(), d.Valid.Len(), d.Test.Len())
	}
	if !slices.Equal(d.Train.InputShape(), []int{4}) || d.Spec.Train != 40 {
		t.Errorf("shape %v, spec train %d", d.Train.InputShape(), d.Spec.Train)
	}
	// The held-out rows are disjoint from the training rows and cover
	// them, and the same seed draws the same ones.
	seen := map[int]bool{}
	for _, s := range []*Set{d.Train, d.Valid} {
		for i := range s.Len() {
			r := s.rows(i)
			if seen[r] {
				t.Fatalf("row %d in two splits", r)
			}
			seen[r] = true
		}
	}
	if len(seen) != 50 {
		t.Errorf("%d rows in train and valid, want 50", len(seen))
	}
	again, err := Load(dir, Options{Valid: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Load(dir, Options{Valid: 10, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Valid.index, d.Valid.index) || slices.Equal(other.Valid.index, d.Valid.index) {
		t.Errorf("held out %v, again %v, seed 2 %v: want the same, then different", d.Valid.index, again.Valid.index, other.Valid.index)
	}
	// Standardised on the training split: each feature has mean 0 and
	// standard deviation 1 there.
	x, y := make([]float32, 4), make([]float32, 2)
	for f := range 4 {
		var sum, sq float64
		for i := range d.Train.Len() {
			if err := d.Train.Example(i, x, y); err != nil {
				t.Fatal(err)
			}
			sum += float64(x[f])
			sq += float64(x[f]) * float64(x[f])
		}
		n := float64(d.Train.Len())
		if mean, v := sum/n, sq/n-(sum/n)*(sum/n); math.Abs(mean) > 1e-6 || math.Abs(v-1) > 1e-5 {
			t.Errorf("feature %d: mean %v, variance %v after standardising", f, mean, v)
		}
	}
	// Targets as written: example i of the test split is row i.
	if err := d.Test.Example(7, x, y); err != nil {
		t.Fatal(err)
	}
	if y[0] != 1 || y[1] != float32(0.7) {
		t.Errorf("test example 7's targets %v, want [1 0.7]", y)
	}
	if tasks := d.Test.Tasks(); tasks[0].Kind != data.Classification || tasks[0].Classes != 3 || tasks[1].Kind != data.Regression {
		t.Errorf("tasks %+v", tasks)
	}
}

// Images of bytes with input "unit" read as the built-in composites do,
// x/255 in float32; without test.npz, the validation split is the test
// split.
func TestLoadImagesUnit(t *testing.T) {
	dir := t.TempDir()
	desc := Description{Tasks: []TaskSpec{{Name: "a", Kind: "classification", Classes: 2}}, Input: Unit}
	if err := WriteDescription(dir, desc); err != nil {
		t.Fatal(err)
	}
	n, side := 6, 5
	x := make([]byte, n*side*side)
	for i := range x {
		x[i] = byte(i * 7)
	}
	y := []float64{0, 1, 0, 1, 1, 0}
	if err := WriteSplit(filepath.Join(dir, TrainFile), x, []int{n, side, side}, y); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir, Options{Valid: AutoValid, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Train.InputShape(), []int{1, side, side}) || d.Valid.Len() != 1 || d.Test != d.Valid {
		t.Fatalf("shape %v, valid %d, test is valid %v", d.Train.InputShape(), d.Valid.Len(), d.Test == d.Valid)
	}
	got, ty := make([]float32, side*side), make([]float32, 1)
	if err := d.Train.Example(2, got, ty); err != nil {
		t.Fatal(err)
	}
	r := d.Train.rows(2)
	for p, v := range got {
		if want := float32(x[r*side*side+p]) / 255; v != want {
			t.Fatalf("pixel %d = %v, want %v", p, v, want)
		}
	}
	if ty[0] != float32(y[r]) {
		t.Errorf("label %v, want %v", ty[0], y[r])
	}
}

// writeArrays writes an archive of raw arrays: name → descr, shape and
// little-endian data.
type array struct {
	descr string
	shape []int
	data  any
}

func writeArrays(t *testing.T, path string, arrays map[string]array) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := npz.NewWriter(f)
	for _, name := range []string{"x", "y"} {
		a, ok := arrays[name]
		if !ok {
			continue
		}
		out, err := w.Create(name, a.descr, a.shape)
		if err != nil {
			t.Fatal(err)
		}
		if err := binary.Write(out, binary.LittleEndian, a.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Every kind of malformed directory is an error wrapping data.ErrInvalid
// (data.ErrMissing for a missing file) that names the file, the array and
// the index.
func TestMalformed(t *testing.T) {
	x4 := make([]float32, 8) // 2 examples of 4 features
	yOK := []float64{0, 0.5, 2, 1.5}
	tests := []struct {
		name  string
		edit  func(t *testing.T, dir string)
		want  []string
		wrap  error
		valid int
	}{
		{"wrong shape x", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f4", []int{2, 1, 2, 2, 1}, x4}, "y": {"<f8", []int{2, 2}, yOK}})
		}, []string{"train.npz: array x: shape [2 1 2 2 1]"}, data.ErrInvalid, 0},
		{"y rows", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f4", []int{2, 4}, x4}, "y": {"<f8", []int{1, 4}, yOK}})
		}, []string{"train.npz: array y: 1 rows for the 2 examples"}, data.ErrInvalid, 0},
		{"task missing from a split", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TestFile), map[string]array{
				"x": {"<f4", []int{2, 4}, x4}, "y": {"<f8", []int{2, 1}, yOK[:2]}})
		}, []string{"test.npz: array y: shape [2 1]: want N×2", "digit, size"}, data.ErrInvalid, 0},
		{"splits disagree", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TestFile), map[string]array{
				"x": {"<f4", []int{4, 2}, x4}, "y": {"<f8", []int{4, 2}, append(yOK, yOK...)}})
		}, []string{"test.npz: array x: inputs of shape [2], the training split's are [4]"}, data.ErrInvalid, 0},
		{"string x", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f8", []int{2, 4}, make([]float64, 8)}, "y": {"<f8", []int{2, 2}, yOK}})
			raw(t, filepath.Join(dir, TrainFile), "<U2")
		}, []string{"train.npz: array x", "<U2"}, data.ErrInvalid, 0},
		{"float16 infinity", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f2", []int{2, 4}, []uint16{0, 0, 0, 0x7c00, 0, 0, 0, 0}}, "y": {"<f8", []int{2, 2}, yOK}})
		}, []string{"train.npz: array x: example 0, element 3 is +Inf"}, data.ErrInvalid, 0},
		{"complex x", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f8", []int{2, 4}, make([]float64, 8)}, "y": {"<f8", []int{2, 2}, yOK}})
			raw(t, filepath.Join(dir, TrainFile), "<c8")
		}, []string{"train.npz: array x", "<c8"}, data.ErrInvalid, 0},
		{"label out of range", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f4", []int{2, 4}, x4}, "y": {"<i8", []int{2, 2}, []int64{0, 1, 3, 1}}})
		}, []string{"train.npz: array y: y[1, 0] = 3 is not a class of task digit (0..2)"}, data.ErrInvalid, 0},
		{"label not whole", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f4", []int{2, 4}, x4}, "y": {"<f8", []int{2, 2}, []float64{0.5, 1, 1, 1}}})
		}, []string{"y[0, 0] = 0.5 is not a class"}, data.ErrInvalid, 0},
		{"NaN input", func(t *testing.T, dir string) {
			x := slices.Clone(x4)
			x[6] = float32(math.NaN())
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f4", []int{2, 4}, x}, "y": {"<f8", []int{2, 2}, yOK}})
		}, []string{"train.npz: array x: example 1, element 2 is NaN"}, data.ErrInvalid, 0},
		{"NaN target", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"<f4", []int{2, 4}, x4}, "y": {"<f8", []int{2, 2}, []float64{0, math.Inf(1), 1, 1}}})
		}, []string{"train.npz: array y: y[0, 1] = +Inf: task size's target"}, data.ErrInvalid, 0},
		{"truncated", func(t *testing.T, dir string) {
			path := filepath.Join(dir, TrainFile)
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)-30], 0o644)
		}, []string{"train.npz: not a .npz (zip) archive, or truncated"}, data.ErrInvalid, 0},
		{"2^40-element header", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{
				"x": {"|u1", []int{1 << 20, 1 << 20}, make([]byte, 64)}, "y": {"<f8", []int{2, 2}, yOK}})
		}, []string{"train.npz: array x: truncated: shape [1048576 1048576] of uint8 needs 1099511627776 bytes, the entry holds 64"}, data.ErrInvalid, 0},
		{"no y", func(t *testing.T, dir string) {
			writeArrays(t, filepath.Join(dir, TrainFile), map[string]array{"x": {"<f4", []int{2, 4}, x4}})
		}, []string{"train.npz: no array y"}, data.ErrInvalid, 0},
		{"no train", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, TrainFile))
		}, []string{"has neither train.npz nor train.csv"}, data.ErrMissing, 0},
		{"no tasks.json", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, TasksFile))
		}, []string{"tasks.json: the data directory needs tasks.json"}, data.ErrMissing, 0},
		{"unknown kind", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, TasksFile), []byte(`{"tasks": [{"name": "a", "kind": "ranking"}]}`), 0o644)
		}, []string{`tasks.json: task a: kind "ranking"`}, data.ErrInvalid, 0},
		{"unknown field", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, TasksFile), []byte(`{"tasks": [{"name": "a", "kind": "regression", "clases": 2}]}`), 0o644)
		}, []string{`tasks.json: json: unknown field "clases"`}, data.ErrInvalid, 0},
		{"name twice", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, TasksFile), []byte(`{"tasks": [{"name": "a", "kind": "regression"}, {"name": "a", "kind": "regression"}]}`), 0o644)
		}, []string{`task 1: name "a" used twice`}, data.ErrInvalid, 0},
		{"one class", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, TasksFile), []byte(`{"tasks": [{"name": "a", "kind": "classification", "classes": 1}]}`), 0o644)
		}, []string{`task a: a classification task needs "classes" of at least 2`}, data.ErrInvalid, 0},
		{"bad input", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, TasksFile), []byte(`{"tasks": [{"name": "a", "kind": "regression"}], "input": "zscore"}`), 0o644)
		}, []string{`input "zscore"`}, data.ErrInvalid, 0},
		{"holding out everything", func(t *testing.T, dir string) {}, []string{"-valid 10: holding out 10 of the 10 examples"}, nil, 10},
		{"nothing to evaluate on", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, TestFile))
		}, []string{"neither a validation nor a test split"}, data.ErrInvalid, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := vectors(t, twoTasks, 10)
			tt.edit(t, dir)
			_, err := Load(dir, Options{Valid: tt.valid})
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wrap == nil {
				if !errors.As(err, new(*data.SettingError)) {
					t.Errorf("error %q is not a data.SettingError", err)
				}
			} else if !errors.Is(err, tt.wrap) {
				t.Errorf("error %q does not wrap %v", err, tt.wrap)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// raw rewrites the descr of x in the archive at path (same length), to
// write a type the writer refuses.
func raw(t *testing.T, path, descr string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "'descr': '<f8'")
	if i < 0 {
		t.Fatal("no descr")
	}
	copy(b[i+len("'descr': '"):], descr)
	// The entry is stored: its CRC no longer matches, so rebuild it.
	z, err := zip.NewReader(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(path)
	w := zip.NewWriter(f)
	for _, e := range z.File {
		r, _ := e.OpenRaw()
		content := make([]byte, e.CompressedSize64)
		r.Read(content)
		out, _ := w.CreateHeader(&zip.FileHeader{Name: e.Name, Method: zip.Store})
		out.Write(content)
	}
	w.Close()
	f.Close()
}

// Inputs read a file a chunk at a time, normalised as the spec says, and
// refuse a shape the model was not trained on.
func TestInputs(t *testing.T) {
	dir := vectors(t, twoTasks, 50)
	d, err := Load(dir, Options{Valid: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	in, err := OpenInputs(filepath.Join(dir, TestFile), &d.Spec)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Len() != 25 {
		t.Fatalf("%d inputs, want 25", in.Len())
	}
	x, want, y := make([]float32, 4), make([]float32, 4), make([]float32, 2)
	k := 0
	for {
		s, err := in.Next(7)
		if err != nil {
			t.Fatal(err)
		}
		if s == nil {
			break
		}
		for i := range s.Len() {
			if err := s.Example(i, x, y); err != nil {
				t.Fatal(err)
			}
			if err := d.Test.Example(k, want, y); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(x, want) {
				t.Fatalf("input %d: %v, the test split reads %v", k, x, want)
			}
			k++
		}
	}
	if k != 25 {
		t.Errorf("read %d inputs, want 25", k)
	}
	bad := filepath.Join(t.TempDir(), "bad.npz")
	writeArrays(t, bad, map[string]array{"x": {"<f4", []int{2, 2, 2}, make([]float32, 8)}})
	if _, err := OpenInputs(bad, &d.Spec); !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "shape [2 2 2]: the model was trained on N×4 inputs") {
		t.Errorf("wrong shape: %v", err)
	}
}

// A CSV split: targets by the tasks' names, inputs the other columns, in
// the training file's order, found by name in the other files and by
// predict; problems name the file, the line and the column.
func TestCSV(t *testing.T) {
	write := func(dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setup := func() string {
		dir := t.TempDir()
		if err := WriteDescription(dir, Description{Tasks: twoTasks.Tasks, Input: None}); err != nil {
			t.Fatal(err)
		}
		write(dir, "train.csv", "a,digit,b,size,c\n1,0,2,0.5,3\n4,2,5,1.5,6\n7,1,8,2.5,9\n")
		write(dir, "test.csv", "size,c,b,digit,a\n0.25,30,20,1,10\n")
		return dir
	}
	d, err := Load(setup(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Spec.Columns, []string{"a", "b", "c"}) || !slices.Equal(d.Spec.Shape, []int{3}) || d.Valid != nil || d.Test.Len() != 1 {
		t.Fatalf("spec %+v, test %d", d.Spec, d.Test.Len())
	}
	x, y := make([]float32, 3), make([]float32, 2)
	if err := d.Train.Example(1, x, y); err != nil || !slices.Equal(x, []float32{4, 5, 6}) || !slices.Equal(y, []float32{2, 1.5}) {
		t.Errorf("train example 1: %v %v %v", x, y, err)
	}
	if err := d.Test.Example(0, x, y); err != nil || !slices.Equal(x, []float32{10, 20, 30}) || !slices.Equal(y, []float32{1, 0.25}) {
		t.Errorf("test example 0 (columns reordered): %v %v %v", x, y, err)
	}
	// predict reads the inputs by name, without the targets.
	dir := t.TempDir()
	write(dir, "new.csv", "c,a,b\n3,1,2\n6,4,5\n9,7,8\n")
	in, err := OpenInputs(filepath.Join(dir, "new.csv"), &d.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var got []float32
	for {
		s, err := in.Next(2)
		if err != nil {
			t.Fatal(err)
		}
		if s == nil {
			break
		}
		for i := range s.Len() {
			s.Example(i, x, y)
			got = append(got, x...)
		}
	}
	in.Close()
	if in.Len() != 3 || !slices.Equal(got, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("%d inputs %v", in.Len(), got)
	}

	for _, tc := range []struct {
		file, content, want string
	}{
		{"train.csv", "a,digit,b,size,c\n1,0,2,x,3\n", `train.csv: line 2, column "size": "x" is not a number`},
		{"train.csv", "a,digit,b,size,c\n1,0,2,1,3\n1,3,2,1,3\n", `train.csv: line 3, column "digit": 3 is not a class of task digit (0..2)`},
		{"train.csv", "a,digit,b,size,c\n1,0,NaN,1,3\n", `train.csv: column "b" has no values, every one missing`},
		{"train.csv", "a,digit,b,size,c\n1,0,NaN,1,3\n1,0,2,1,3\n", `train.csv: line 2, column "b": a missing value ("NaN"); fill it in, or drop such rows with -missing drop`},
		{"train.csv", "a,digit,b,size,c\n1,0,inf,1,3\n", `train.csv: line 2, column "b": +Inf (inputs must be finite`},
		{"train.csv", "a,b,size,c\n1,2,1,3\n", "train.csv: no column for task digit"},
		{"train.csv", "a,digit,b,size,c\n1,0,2,1\n", "train.csv: record on line 2: wrong number of fields"},
		{"train.csv", "a,digit,a,size\n1,0,2,1\n", `column 3, "a", is empty or named twice`},
		{"test.csv", "size,c,b,digit,a,d\n0.25,30,20,1,10,0\n", `test.csv: column "d" is neither an input of the training split nor a task`},
		{"test.csv", "size,c,digit,a\n0.25,30,1,10\n", `test.csv: no column "b", an input of the training split`},
		{"train.npz", "", "both train.npz and train.csv"},
	} {
		dir := setup()
		write(dir, tc.file, tc.content)
		_, err := Load(dir, Options{})
		if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want data.ErrInvalid and %q", tc.file, tc.content, err, tc.want)
		}
	}
	write(dir, "bad.csv", "a,b\n1,2\n")
	if _, err := OpenInputs(filepath.Join(dir, "bad.csv"), &d.Spec); !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), `bad.csv: no column "c"`) {
		t.Errorf("predict inputs without a column: %v", err)
	}
}

// Random CSV text as a training split never panics the loader: it
// loads, or is refused as bad data.
func FuzzCSV(f *testing.F) {
	f.Add("a,digit,b,size\n1,0,2,0.5\n4,2,5,1.5\n")
	f.Add("digit,size,a\n1,1e308,3\n")
	f.Add("a,digit,size\n\"1\n\",0,1\n")
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		if err := WriteDescription(dir, twoTasks); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "train.csv"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := Load(dir, Options{Valid: AutoValid, Seed: 1})
		if err != nil {
			if !errors.Is(err, data.ErrInvalid) && !errors.As(err, new(*data.SettingError)) {
				t.Fatalf("error %v is not bad data", err)
			}
			return
		}
		x, y := make([]float32, data.InputSize(d.Train)), make([]float32, 2)
		for i := range d.Train.Len() {
			if err := d.Train.Example(i, x, y); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A split that is a link to a device is refused by name, not read.
func TestNotRegular(t *testing.T) {
	dir := vectors(t, twoTasks, 10)
	for _, name := range []string{TrainFile, TasksFile} {
		path := filepath.Join(dir, name)
		os.Rename(path, path+".bak")
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Skip(err)
		}
		_, err := Load(dir, Options{})
		if err == nil || !strings.Contains(err.Error(), name+": not a regular file but a character device") {
			t.Errorf("%s linked to /dev/zero: %v", name, err)
		}
		os.Remove(path)
		os.Rename(path+".bak", path)
	}
}
