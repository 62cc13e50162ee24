package files

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writeDir writes a data directory of the named files' contents.
func writeDir(t *testing.T, contents map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, c := range contents {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// imputeTasks is one classification task, "y".
const imputeTasks = `{"tasks": [{"name": "y", "kind": "classification"}], "input": "none"}`

// Under MissingImpute a numeric column with a missing training value
// gets its training median and an indicator feature; a categorical one
// the MissingCategory; a column with no missing training value only the
// median, in the other splits. The medians are the training split's
// alone: here valid.csv's values (100, 200) would move them.
func TestImpute(t *testing.T) {
	// pandas' to_csv: an unnamed index, an empty cell for a missing value.
	train := ",a,b,c,y\n0,1.0,10,red,0\n1,,20,,1\n2,3.0,30,blue,0\n3,5.0,40,red,1\n4,4.0,,blue,0\n"
	valid := ",a,b,c,y\n5,100,200,red,0\n6,NA,NA,NA,1\n"
	d, err := Load(writeDir(t, map[string]string{TasksFile: imputeTasks, "train.csv": train, "valid.csv": valid}), Options{Missing: MissingImpute})
	if err != nil {
		t.Fatal(err)
	}
	// a's median over 1, 3, 5, 4 is 3.5; b's over 10, 20, 30, 40 is 25.
	if want := map[string]float64{"a": 3.5, "b": 25}; !mapsEqual(d.Spec.Medians, want) {
		t.Errorf("medians %v, want %v", d.Spec.Medians, want)
	}
	if !slices.Equal(d.Spec.Indicators, []string{"a", "b"}) || !slices.Equal(d.Spec.Categories["c"], []string{"blue", "red", MissingCategory}) {
		t.Errorf("indicators %v, categories %v", d.Spec.Indicators, d.Spec.Categories)
	}
	// Features: a, a missing, b, b missing, c: blue, red, (missing).
	for _, tc := range []struct {
		split string
		s     *Set
		r     int
		want  []float64
	}{
		{"train", d.Train, 0, []float64{1, 0, 10, 0, 0, 1, 0}},
		{"train", d.Train, 1, []float64{3.5, 1, 20, 0, 0, 0, 1}},
		{"train", d.Train, 4, []float64{4, 0, 25, 1, 1, 0, 0}},
		{"valid", d.Valid, 0, []float64{100, 0, 200, 0, 0, 1, 0}},
		{"valid", d.Valid, 1, []float64{3.5, 1, 25, 1, 0, 0, 1}},
	} {
		if x, _ := row(tc.s, tc.r); !slices.Equal(x, tc.want) {
			t.Errorf("%s row %d: %v, want %v", tc.split, tc.r, x, tc.want)
		}
	}
	if ids := d.Train.IDs(); !slices.Equal(ids, []string{"0", "1", "2", "3", "4"}) {
		t.Errorf("ids from the index column: %v", ids)
	}
}

// The medians are fitted on the rows left for training once -valid holds
// some out: a median of all the file's rows would differ.
func TestImputeHoldOut(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,y\n")
	for i := range 40 {
		a := ""
		if i%5 != 0 {
			a = strconv.Itoa(i * 7 % 13)
		}
		b.WriteString(a + "," + []string{"0", "1"}[i%2] + "\n")
	}
	d, err := Load(writeDir(t, map[string]string{TasksFile: imputeTasks, "train.csv": b.String()}), Options{Missing: MissingImpute, Valid: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Brute force: the median of the non-missing a of the training rows,
	// read from the file by the rows the hold-out kept.
	var vals []float64
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")[1:]
	for _, r := range d.Train.index {
		if cell := strings.Split(lines[r], ",")[0]; cell != "" {
			v, _ := number(cell)
			vals = append(vals, v)
		}
	}
	slices.Sort(vals)
	want := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		want = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	if d.Spec.Medians["a"] != want {
		t.Errorf("median %v, the training rows' is %v", d.Spec.Medians["a"], want)
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || math.Abs(v-w) > 1e-12 {
			return false
		}
	}
	return true
}

// Missing tokens are those pandas and R write ("", NA, NaN); "None",
// "null", "NULL" and "n/a" are text unless named in NAValues; a label
// that tasks.json declares as a class is that class.
func TestMissingTokens(t *testing.T) {
	train := "\"\",\"exer\",\"y\"\n\"1\",\"None\",\"a\"\n\"2\",\"Some\",\"b\"\n\"3\",\"null\",\"a\"\n\"4\",NA,\"b\"\n\"5\",\"n/a\",NA\n\"6\",\"NULL\",\"b\"\n"
	for _, tc := range []struct {
		name  string
		tasks string
		o     Options
		cats  []string
		ys    []float64 // NaN: missing
	}{
		{"pandas and R tokens", imputeTasks, Options{Missing: MissingImpute},
			[]string{"NULL", "None", "Some", "n/a", "null", MissingCategory}, []float64{0, 1, 0, 1, math.NaN(), 1}},
		{"named tokens", imputeTasks, Options{Missing: MissingImpute, NAValues: []string{"None", "null"}},
			[]string{"NULL", "Some", "n/a", MissingCategory}, []float64{0, 1, 0, 1, math.NaN(), 1}},
		{"a class named NA", `{"tasks": [{"name": "y", "kind": "classification", "class_names": ["a", "b", "NA"]}]}`, Options{Missing: MissingImpute},
			[]string{"NULL", "None", "Some", "n/a", "null", MissingCategory}, []float64{0, 1, 0, 1, 2, 1}},
		{"legacy tokens", imputeTasks, Options{Missing: MissingImpute, LegacyNA: true},
			[]string{"Some", MissingCategory}, []float64{0, 1, 0, 1, math.NaN(), 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Load(writeDir(t, map[string]string{TasksFile: tc.tasks, "train.csv": train, "test.csv": train}), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Spec.Categories["exer"]; !slices.Equal(got, tc.cats) {
				t.Errorf("categories %q, want %q", got, tc.cats)
			}
			for r, want := range tc.ys {
				_, y := row(d.Train, r)
				if got := float64(y[0]); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("row %d: label %v, want %v", r, got, want)
				}
			}
		})
	}
}

// predict's inputs under each policy: impute fills every row from the
// spec's medians; drop skips a row with a missing input and lists it
// (line and id), the last rows included; refuse names the cell.
func TestPredictMissing(t *testing.T) {
	train := ",a,c,y\n0,1,red,0\n1,,blue,1\n2,3,red,0\n3,5,,1\n4,7,blue,1\n"
	newCSV := ",a,c\nr1,2,red\nr2,NA,blue\nr3,4,NA\nr4,6,red\nr5,,red\n"
	for _, tc := range []struct {
		missing string
		ids     []string
		x       [][]float64 // a, a missing, c: blue, red, (missing)
		skipped []Skipped
		err     string
	}{
		{MissingImpute, []string{"r1", "r2", "r3", "r4", "r5"}, [][]float64{{2, 0, 0, 1, 0}, {4, 1, 1, 0, 0}, {4, 0, 0, 0, 1}, {6, 0, 0, 1, 0}, {4, 1, 0, 1, 0}}, nil, ""},
		{MissingDrop, []string{"r1", "r4"}, [][]float64{{2, 0, 1}, {6, 0, 1}}, []Skipped{{3, "r2"}, {4, "r3"}, {6, "r5"}}, ""},
		{MissingRefuse, nil, nil, nil, `new.csv: line 3, column "a": a missing value ("NA")`},
	} {
		t.Run(tc.missing, func(t *testing.T) {
			o := Options{Missing: tc.missing}
			if tc.missing == MissingRefuse {
				o.Missing = MissingDrop // the training split has holes; the spec says refuse
			}
			d, err := Load(writeDir(t, map[string]string{TasksFile: imputeTasks, "train.csv": train, "test.csv": train}), o)
			if err != nil {
				t.Fatal(err)
			}
			spec := roundTrip(t, d.Spec)
			spec.Missing = tc.missing
			path := filepath.Join(t.TempDir(), "new.csv")
			os.WriteFile(path, []byte(newCSV), 0o644)
			in, err := OpenInputs(path, &spec)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var xs [][]float64
			var ids []string
			for {
				s, err := in.Next(2)
				if err != nil {
					if tc.err == "" || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("error %v, want %q", err, tc.err)
					}
					return
				}
				if s == nil {
					break
				}
				for r := range s.Len() {
					x := make([]float64, s.size)
					for p := range x {
						x[p] = s.raw(r*s.size + p)
					}
					xs = append(xs, x)
				}
				ids = append(ids, s.IDs()...)
			}
			if tc.err != "" {
				t.Fatalf("no error, want %q", tc.err)
			}
			if in.Len() != len(tc.x) || !slices.EqualFunc(xs, tc.x, slices.Equal) || !slices.Equal(ids, tc.ids) || !slices.Equal(in.Skipped(), tc.skipped) {
				t.Errorf("%d rows %v ids %v skipped %v; want %v %v %v", in.Len(), xs, ids, in.Skipped(), tc.x, tc.ids, tc.skipped)
			}
			if in.IDName() != "id" {
				t.Errorf("id name %q, want id", in.IDName())
			}
		})
	}
}

// A text column with a value of its own in nearly every row (here R's
// dates) is refused by name with the way out; listed as categorical it
// is encoded; a column of a few values in as many rows is a category.
func TestNearUniqueText(t *testing.T) {
	var dates, few strings.Builder
	dates.WriteString("\"\",\"date\",\"y\"\n")
	few.WriteString("\"\",\"kind\",\"y\"\n")
	for i := range 30 {
		fmt.Fprintf(&dates, "\"%d\",\"2024-01-%02d\",%d\n", i+1, i+1, i%2)
		fmt.Fprintf(&few, "\"%d\",\"k%d\",%d\n", i+1, i%5, i%2)
	}
	for _, tc := range []struct {
		name, train, tasks, want string
	}{
		{"dates", dates.String(), imputeTasks, `train.csv: column "date" has a distinct value in nearly every row (30 distinct of 30; line 2: "2024-01-01")`},
		{"dates as categorical", dates.String(), `{"tasks": [{"name": "y", "kind": "classification"}], "categorical": ["date"]}`, ""},
		{"five kinds", few.String(), imputeTasks, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeDir(t, map[string]string{TasksFile: tc.tasks, "train.csv": tc.train, "test.csv": tc.train}), Options{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"ignore"`)):
				t.Errorf("error %v, want %q and the \"ignore\" hint", err, tc.want)
			}
		})
	}
}

// Loading says which columns are inputs, and names a column that is
// neither an input nor a task.
func TestColumnNotes(t *testing.T) {
	train := "a,comment,y\n1,fine,0\n2,odd,1\n3,fine,0\n"
	d, err := Load(writeDir(t, map[string]string{TasksFile: `{"tasks": [{"name": "y", "kind": "classification"}], "ignore": ["comment"]}`, "train.csv": train, "test.csv": train}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{"train.csv: 1 input columns, 1 features: a (every column but the tasks'", `train.csv: column "comment" is neither an input nor a task`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// Number labels that leave classes below the largest without a training
// example (cylinders 4, 6 and 8: 9 classes, 0-3, 5 and 7 unseen) are
// noted, with the class_names that would make them names; labels 0 to
// the largest, or booleans, are not.
func TestUnseenClassesNoted(t *testing.T) {
	for _, tc := range []struct {
		labels []string
		want   string // "" for no note
	}{
		{[]string{"4", "6", "8", "6"}, `task cyl: its labels in train.csv are 4, 6, 8, so classes 0, 1, 2, 3, 5, 7 have no training example; if the labels name classes rather than number them from 0, give tasks.json's "class_names": ["4", "6", "8"]`},
		{[]string{"0", "2", "1", "2"}, ""},
		{[]string{"1", "0", "1", "1"}, ""},
	} {
		train := "a,cyl\n"
		for i, l := range tc.labels {
			train += fmt.Sprintf("%d,%s\n", i, l)
		}
		d, err := Load(writeDir(t, map[string]string{TasksFile: `{"tasks": [{"name": "cyl", "kind": "classification"}]}`, "train.csv": train, "test.csv": train}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(d.Notes, "\n")
		if got := strings.Contains(notes, "have no training example"); got != (tc.want != "") || !strings.Contains(notes, tc.want) {
			t.Errorf("labels %v: notes\n%s\nwant %q", tc.labels, notes, tc.want)
		}
	}
}
