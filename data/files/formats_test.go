package files

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
)

// formats is testdata/formats: data directories as NumPy, pandas and R
// write them (make_fixtures.py there). Row 0 of every training split is
// x1 −0.365169, x2 −0.450637, colour blue, flag False, species ant,
// value 3478.875.
const formats = "testdata/formats"

func loadFormat(t *testing.T, name string, o Options) *Data {
	t.Helper()
	d, err := Load(filepath.Join(formats, name), o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// row is row r of the split as read, before normalisation, and its
// targets.
func row(s *Set, r int) ([]float64, []float32) {
	x := make([]float64, s.size)
	for p := range x {
		x[p] = s.raw(r*s.size + p)
	}
	k := len(s.tasks)
	return x, s.y[r*k : (r+1)*k]
}

func near(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// Archives as NumPy writes a pandas frame's to_numpy() (Fortran order),
// int64 inputs with a boolean target, float16 inputs with int8 targets:
// each reads as its values, in C order, and a classification task
// without "classes" gets them from its largest label.
func TestFormatsNPZ(t *testing.T) {
	d := loadFormat(t, "npz-fortran", Options{})
	x, y := row(d.Train, 0)
	// x1, x2, flag, then colour one-hot (red, green, blue)
	if !near(x, []float64{-0.365169, -0.450637, 0, 0, 0, 1}, 1e-6) || y[0] != 0 || y[1] != 3478.875 {
		t.Errorf("npz-fortran row 0: %v %v", x, y)
	}
	if x, y := row(d.Train, 1); !near(x, []float64{0.326041, 1.164209, 1, 0, 0, 1}, 1e-6) || y[0] != 1 {
		t.Errorf("npz-fortran row 1: %v %v", x, y)
	}
	if d.Spec.Tasks[0].Classes != 3 || d.Train.Len() != 600 || d.Test.Len() != 200 {
		t.Errorf("npz-fortran: classes %d, %d and %d examples", d.Spec.Tasks[0].Classes, d.Train.Len(), d.Test.Len())
	}

	d = loadFormat(t, "npz-int", Options{})
	if x, y := row(d.Train, 0); !slices.Equal(x, []float64{-365, -451, 2}) || y[0] != 0 {
		t.Errorf("npz-int row 0: %v %v", x, y)
	}
	if d.Spec.Tasks[0].Classes != 2 {
		t.Errorf("npz-int: %d classes from a boolean target, want 2", d.Spec.Tasks[0].Classes)
	}

	d = loadFormat(t, "npz-half", Options{})
	if x, y := row(d.Train, 0); !near(x, []float64{-0.365169, -0.450637, 0, 0, 0, 1}, 2e-4) || y[0] != 0 {
		t.Errorf("npz-half row 0: %v %v", x, y)
	}
}

// CSV files as pandas' to_csv (with its index, or with ";" and a
// byte-order mark) and R's write.csv write them: the index column is
// skipped, "id" identifies the rows, colour is one-hot over its sorted
// categories, flag's True/False and TRUE/FALSE read 1 and 0, species'
// strings are classes in sorted order, and a missing label is NaN.
func TestFormatsCSV(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		o       Options
		indexed bool
		rows    int
	}{
		{"pandas-index", Options{}, true, 600},
		{"pandas-semicolon", Options{}, false, 600},
		{"pandas-semicolon", Options{Sep: ";"}, false, 600},
		{"r-write-csv", Options{Missing: MissingDrop}, true, 599},
	} {
		t.Run(tc.dir+tc.o.Sep, func(t *testing.T) {
			d := loadFormat(t, tc.dir, tc.o)
			sp := d.Spec
			if !slices.Equal(sp.Columns, []string{"x1", "x2", "colour", "flag"}) || !slices.Equal(sp.Shape, []int{6}) || sp.ID != "id" ||
				!slices.Equal(sp.Categories["colour"], []string{"blue", "green", "red"}) {
				t.Fatalf("columns %q, shape %v, id %q, categories %v", sp.Columns, sp.Shape, sp.ID, sp.Categories)
			}
			if tk := sp.Tasks[0]; tk.Classes != 3 || !slices.Equal(tk.ClassNames, []string{"ant", "bee", "cat"}) {
				t.Errorf("species: %d classes %q", tk.Classes, tk.ClassNames)
			}
			if d.Train.Len() != tc.rows {
				t.Errorf("%d training rows, want %d", d.Train.Len(), tc.rows)
			}
			x, y := row(d.Train, 0)
			if !near(x, []float64{-0.365169, -0.450637, 1, 0, 0, 0}, 1e-6) || y[0] != 0 || y[1] != 3478.875 {
				t.Errorf("row 0: %v %v", x, y)
			}
			if x, _ := row(d.Train, 1); x[5] != 1 {
				t.Errorf("row 1's flag True: %v", x)
			}
			if ids := d.Train.IDs(); len(ids) != tc.rows || ids[0] != "s0000" || ids[1] != "s0001" {
				t.Errorf("ids %q…", ids[:min(3, len(ids))])
			}
			missing := 0
			for i := range d.Train.Len() {
				if _, y := row(d.Train, i); y[0] != y[0] {
					missing++
				}
			}
			if missing < 60 || missing > 180 {
				t.Errorf("%d missing species labels, the fixture has about 120", missing)
			}
			if sc, ok := sp.Targets["value"]; !ok || math.Abs(sc.Mean-4200) > 200 || sc.Std < 400 || sc.Std > 1200 {
				t.Errorf("value's target scale %+v", sp.Targets)
			}
			notes := strings.Join(d.Notes, "\n")
			for _, want := range []string{"4 input columns, 6 features: x1, x2, colour (categorical, 3 categories", "task species: 3 classes from the training split's labels",
				"training labels are missing", "task value: regression targets standardised"} {
				if !strings.Contains(notes, want) {
					t.Errorf("notes %q\nlack %q", notes, want)
				}
			}
			if got := strings.Contains(notes, "taken as the row index"); got != tc.indexed {
				t.Errorf("index noted %v, want %v: %q", got, tc.indexed, notes)
			}
		})
	}
	_, err := Load(filepath.Join(formats, "r-write-csv"), Options{})
	if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), `train.csv: line 5, column "x2": a missing value ("NA")`) {
		t.Errorf("R's NA input without -missing drop: %v", err)
	}
}

// predict reads pandas' to_csv of new inputs (index, id, no targets) as
// the test split reads the same rows, and carries the ids.
func TestFormatsPredict(t *testing.T) {
	d := loadFormat(t, "pandas-index", Options{})
	spec := roundTrip(t, d.Spec)
	in, err := OpenInputs(filepath.Join(formats, "pandas-index", "new.csv"), &spec)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	x, want, y := make([]float32, 6), make([]float32, 6), make([]float32, 2)
	k := 0
	for {
		s, err := in.Next(7)
		if err != nil {
			t.Fatal(err)
		}
		if s == nil {
			break
		}
		ids := s.IDs()
		for i := range s.Len() {
			s.Example(i, x, y)
			d.Test.Example(k, want, y)
			if !slices.Equal(x, want) {
				t.Fatalf("input %d: %v, the test split reads %v", k, x, want)
			}
			if ids[i] != d.Test.IDs()[k] {
				t.Fatalf("input %d: id %q, the test split's %q", k, ids[i], d.Test.IDs()[k])
			}
			k++
		}
	}
	if k != 20 {
		t.Errorf("%d inputs, want 20", k)
	}
	// A category the training split did not have is named.
	path := filepath.Join(t.TempDir(), "new.csv")
	os.WriteFile(path, []byte(",id,x1,x2,colour,flag\n0,a,1,2,red,True\n1,b,1,2,purple,False\n"), 0o644)
	in, err = OpenInputs(path, &spec)
	if err == nil {
		_, err = in.Next(10)
		in.Close()
	}
	if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), `new.csv: line 3, column "colour": "purple" is not a category of the training split ("blue", "green", "red")`) {
		t.Errorf("unseen category: %v", err)
	}
	os.WriteFile(path, []byte("id,x1,x2,colour,flag\na,1,,red,True\n"), 0o644)
	in, err = OpenInputs(path, &spec)
	if err == nil {
		_, err = in.Next(10)
		in.Close()
	}
	if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), `new.csv: line 2, column "x2": a missing value ("")`) {
		t.Errorf("missing input at predict: %v", err)
	}
}

// roundTrip is spec as a checkpoint records it: through JSON.
func roundTrip(t *testing.T, spec Spec) Spec {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out Spec
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// What loading decided is recorded in the spec: reloaded with the
// options the recorded spec gives, the data agree with it; the tasks it
// gives carry the target scale; a spec recorded before target scales
// (an input normalisation, no scales) loads its targets as they are.
func TestFormatsSpecRecords(t *testing.T) {
	dir := filepath.Join(formats, "pandas-semicolon")
	d := loadFormat(t, "pandas-semicolon", Options{Sep: ";", Missing: MissingDrop})
	rec := roundTrip(t, d.Spec)
	if rec.Sep != ";" || rec.Missing != MissingDrop || rec.RawTargets {
		t.Errorf("options recorded: %+v", rec)
	}
	again, err := Load(dir, rec.Options(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Spec.Agrees(&rec); err != nil {
		t.Errorf("reloaded: %v", err)
	}
	tasks := rec.DataTasks()
	if sc := rec.Targets["value"]; tasks[1].Shift != sc.Mean || tasks[1].Scale != sc.Std || tasks[0].Scale != 0 {
		t.Errorf("tasks %+v, scales %+v", tasks, rec.Targets)
	}
	// Another category set or target scale is named.
	other := roundTrip(t, d.Spec)
	other.Categories["colour"] = []string{"blue", "red"}
	if err := again.Spec.Agrees(&other); err == nil || !strings.Contains(err.Error(), `column "colour"'s categories has 3 elements now, the run recorded 2`) {
		t.Errorf("categories differ: %v", err)
	}
	other = roundTrip(t, d.Spec)
	other.Targets["value"] = Scale{Mean: 1, Std: 2}
	if err := again.Spec.Agrees(&other); err == nil || !strings.Contains(err.Error(), `task "value"'s target scale`) {
		t.Errorf("target scales differ: %v", err)
	}
	// An old spec: targets as they are.
	old := roundTrip(t, d.Spec)
	old.Targets, old.SHA256, old.Version = nil, nil, 0
	if o := old.Options(0, 1); !o.RawTargets {
		t.Error("a spec without target scales standardises")
	}
	raw, err := Load(dir, old.Options(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if raw.Spec.Targets != nil || raw.Spec.DataTasks()[1].Scale != 0 || raw.Spec.Agrees(&old) != nil {
		t.Errorf("old spec reloaded: scales %v, agrees %v", raw.Spec.Targets, raw.Spec.Agrees(&old))
	}
	// A new run asking for raw targets records none, and says so.
	if d := loadFormat(t, "pandas-semicolon", Options{RawTargets: true}); d.Spec.Targets != nil || !d.Spec.RawTargets || !d.Spec.Options(0, 1).RawTargets {
		t.Errorf("raw targets: %+v", d.Spec)
	}
}

// The CSV options and problems: separators found or given, an
// ignored column, a categorical column of numbers, labels through
// class_names, classes from numeric labels; a decimal comma, a column of
// numbers and text, too many categories, a task without a label, a
// label that is not a class: each an error naming the file, the line
// where there is one, and the column.
func TestCSVOptions(t *testing.T) {
	type files = map[string]string
	twoTask := `{"tasks": [{"name": "digit", "kind": "classification"}, {"name": "size", "kind": "regression"}], "input": "none"`
	many := "a,digit,size\n"
	for i := range MaxCategories + 1 {
		many += "v" + strings.Repeat("x", i%7) + string(rune('A'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)) + ",0,1\n"
	}
	for _, tc := range []struct {
		name  string
		files files
		o     Options
		want  string // error; "" loads
		check func(t *testing.T, d *Data)
	}{
		{"tab", files{"train.csv": "a\tdigit\tsize\n1\t0\t0.5\n2\t1\t1.5\n"}, Options{}, "", func(t *testing.T, d *Data) {
			if x, y := row(d.Train, 1); x[0] != 2 || y[0] != 1 || d.Spec.Tasks[0].Classes != 2 {
				t.Errorf("row 1 %v %v, classes %d", x, y, d.Spec.Tasks[0].Classes)
			}
		}},
		{"tab given", files{"train.csv": "a\tdigit\tsize\n1\t0\t0.5\n2\t1\t1.5\n"}, Options{Sep: "tab"}, "", nil},
		{"quoted separators", files{"train.csv": "\"a;b\",digit,size\n1,0,0.5\n2,1,1.5\n"}, Options{}, "", func(t *testing.T, d *Data) {
			if d.Spec.Columns[0] != "a;b" {
				t.Errorf("columns %q", d.Spec.Columns)
			}
		}},
		{"wrong sep given", files{"train.csv": "a;digit;size\n1;0;0.5\n"}, Options{Sep: ","}, "no column for task digit", nil},
		{"bad sep", files{"train.csv": "a,digit,size\n1,0,0.5\n"}, Options{Sep: "::"}, `separator "::"`, nil},
		{"ignore", files{"train.csv": "a,note,digit,size\n1,hello,0,0.5\n2,,1,1.5\n", TasksFile: twoTask + `, "ignore": ["note"]}`}, Options{}, "", func(t *testing.T, d *Data) {
			if !slices.Equal(d.Spec.Columns, []string{"a"}) {
				t.Errorf("columns %q", d.Spec.Columns)
			}
		}},
		{"categorical numbers", files{"train.csv": "zip,digit,size\n75001,0,0.5\n10115,1,1.5\n75001,1,1\n", TasksFile: twoTask + `, "categorical": ["zip"]}`}, Options{}, "", func(t *testing.T, d *Data) {
			if x, _ := row(d.Train, 0); !slices.Equal(d.Spec.Categories["zip"], []string{"10115", "75001"}) || !slices.Equal(x, []float64{0, 1}) {
				t.Errorf("categories %v, row 0 %v", d.Spec.Categories, x)
			}
		}},
		{"id named", files{"train.csv": "key,a,digit,size\nk1,1,0,0.5\nk2,2,1,1.5\n", TasksFile: twoTask + `, "id": "key"}`}, Options{}, "", func(t *testing.T, d *Data) {
			if !slices.Equal(d.Spec.Columns, []string{"a"}) || !slices.Equal(d.Train.IDs(), []string{"k1", "k2"}) {
				t.Errorf("columns %q, ids %q", d.Spec.Columns, d.Train.IDs())
			}
		}},
		{"class names", files{"train.csv": "a,digit,size\n1,two,0.5\n2,0,1.5\n3,one,1\n",
			TasksFile: `{"tasks": [{"name": "digit", "kind": "classification", "class_names": ["zero", "one", "two"]}, {"name": "size", "kind": "regression"}]}`}, Options{}, "", func(t *testing.T, d *Data) {
			var got []float32
			for i := range 3 {
				_, y := row(d.Train, i)
				got = append(got, y[0])
			}
			if !slices.Equal(got, []float32{2, 0, 1}) || d.Spec.Tasks[0].Classes != 3 {
				t.Errorf("labels %v, classes %d", got, d.Spec.Tasks[0].Classes)
			}
		}},
		{"not a class name", files{"train.csv": "a,digit,size\n1,two,0.5\n2,three,1.5\n",
			TasksFile: `{"tasks": [{"name": "digit", "kind": "classification", "class_names": ["zero", "one", "two"]}, {"name": "size", "kind": "regression"}]}`}, Options{},
			`train.csv: line 3, column "digit": "three" is not a class of task digit ("zero", "one", "two")`, nil},
		{"string labels against classes", files{"train.csv": "a,digit,size\n1,cat,0.5\n2,dog,1.5\n", TasksFile: `{"tasks": [{"name": "digit", "kind": "classification", "classes": 3}, {"name": "size", "kind": "regression"}]}`},
			Options{}, `task digit has 2 distinct labels ("cat", "dog"), tasks.json says 3 classes`, nil},
		{"unseen label in test", files{"train.csv": "a,digit,size\n1,cat,0.5\n2,dog,1.5\n", "test.csv": "a,digit,size\n1,cow,2\n"}, Options{},
			`test.csv: line 2, column "digit": "cow" is not a class of task digit ("cat", "dog")`, nil},
		{"decimal comma", files{"train.csv": "a;digit;size\n1,5;0;0.5\n"}, Options{}, `line 2, column "a": "1,5" has a decimal comma`, nil},
		{"numbers and text", files{"train.csv": "a,digit,size\n1,0,0.5\n?,1,1.5\n"}, Options{}, `column "a" mixes numbers (line 2: "1") and text (line 3: "?")`, nil},
		{"too many categories", files{"train.csv": many}, Options{}, `column "a" has more than 1000 distinct values`, nil},
		{"no label at all", files{"train.csv": "a,digit,size\n1,0,\n2,1,NA\n"}, Options{}, `column "size": every label of task size is missing`, nil},
		{"regression text", files{"train.csv": "a,digit,size\n1,0,1\n1,1,big\n"}, Options{}, `line 3, column "size": "big" is not a number`, nil},
		{"one class", files{"train.csv": "a,digit,size\n1,0,1\n2,0,2\n"}, Options{}, `task digit's labels go up to 0`, nil},
		{"every row dropped", files{"train.csv": "a,digit,size\n,0,1\n1,1,2\n", "test.csv": "a,digit,size\nNA,0,1\n"}, Options{Missing: MissingDrop}, `test.csv: no examples left: every one of its 1 rows has a missing input`, nil},
		{"ignored task", files{"train.csv": "a,digit,size\n1,0,1\n", TasksFile: twoTask + `, "ignore": ["digit"]}`}, Options{}, `ignore: "digit" is a task`, nil},
		{"missing labels", files{"train.csv": "a,digit,size\n1,0,1\n2,,2\n3,1,\n4,1,3\n"}, Options{}, "", func(t *testing.T, d *Data) {
			_, y1 := row(d.Train, 1)
			_, y2 := row(d.Train, 2)
			if y1[0] == y1[0] || y1[1] != 2 || y2[1] == y2[1] || y2[0] != 1 {
				t.Errorf("rows 1, 2: %v %v", y1, y2)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.files[TasksFile] = cmpOr(tc.files[TasksFile], twoTask+"}")
			if _, ok := tc.files["test.csv"]; !ok {
				tc.files["test.csv"] = tc.files["train.csv"]
			}
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := Load(dir, tc.o)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, data.ErrInvalid) && !errors.As(err, new(*data.SettingError)):
				t.Errorf("error %v is not bad data", err)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestDetectSep(t *testing.T) {
	for _, tc := range []struct {
		head string
		want rune
	}{
		{"a,b,c\n1;2;3;4;5\n", ','},
		{"a;b;c\n", ';'},
		{"a\tb\tc", '\t'},
		{"\"x,y\";b\n", ';'},
		{"single\n", ','},
		{"", ','},
	} {
		if got := detectSep([]byte(tc.head)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.head, got, tc.want)
		}
	}
}

// A spec recorded before Spec.Version (an old checkpoint's) loads its
// directory as then: a column named "id" or "Unnamed: 0" is an input,
// the targets are as they are, and the data agree with the spec; predict
// reads its inputs by the same names.
func TestLegacySpec(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, TasksFile), []byte(`{"tasks": [{"name": "y", "kind": "regression"}], "input": "none"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "train.csv"), []byte("Unnamed: 0,id,x,y\n0,7,5,1000\n1,8,6,2000\n2,9,7,3000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "test.csv"), []byte("Unnamed: 0,id,x,y\n0,7,5,1000\n"), 0o644)
	now := loadFormatDir(t, dir, Options{})
	if !slices.Equal(now.Spec.Columns, []string{"x"}) || now.Spec.ID != "id" || now.Spec.Version != SpecVersion || now.Spec.Targets == nil {
		t.Errorf("a new run: columns %q, id %q, version %d, targets %v", now.Spec.Columns, now.Spec.ID, now.Spec.Version, now.Spec.Targets)
	}
	old := Spec{Dir: dir, Shape: []int{3}, Tasks: []TaskSpec{{Name: "y", Kind: "regression"}}, Input: &Normalization{Kind: None}, Train: 3,
		Columns: []string{"Unnamed: 0", "id", "x"}}
	d := loadFormatDir(t, dir, old.Options(0, 1))
	if err := d.Spec.Agrees(&old); err != nil || d.Spec.Version != 0 || d.Spec.DataTasks()[0].Scale != 0 {
		t.Errorf("an old run's data: %v, version %d, tasks %+v", err, d.Spec.Version, d.Spec.DataTasks())
	}
	if x, y := row(d.Train, 1); !slices.Equal(x, []float64{1, 8, 6}) || y[0] != 2000 {
		t.Errorf("row 1: %v %v", x, y)
	}
	path := filepath.Join(t.TempDir(), "new.csv")
	os.WriteFile(path, []byte("Unnamed: 0,id,x\n5,6,4\n"), 0o644)
	in, err := OpenInputs(path, &old)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s, err := in.Next(5)
	x := make([]float32, 3)
	if err != nil || s.Example(0, x, make([]float32, 1)) != nil || !slices.Equal(x, []float32{5, 6, 4}) {
		t.Errorf("predict's inputs: %v %v", x, err)
	}
}

func loadFormatDir(t *testing.T, dir string, o Options) *Data {
	t.Helper()
	d, err := Load(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
