package files

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// Task names become CSV column headers (TASK/label) and .npz array
// names in predict's outputs: one with a control character, a line or
// paragraph separator, a non-ASCII space or invalid UTF-8 would break
// them, and is refused where tasks.json is read. Printable names of any
// script, with inner spaces, are kept.
func TestTaskNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"top-left", true},
		{"größe", true},
		{"two words", true},
		{"a\rb", false},
		{"a\nb", false},
		{"a\x00b", false},
		{"a\tb", false},
		{"a\x1bb", false},
		{"a\u2028b", false},
		{"a\u2029b", false},
		{"a\u00a0b", false},
		{"a\u0085b", false},
		{"a,b", false},
		{"a/b", false},
		{`a"b`, false},
		{" a", false},
		{"", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), TasksFile)
			// Written by hand, the name's bytes as they are.
			content := `{"tasks": [{"name": "` + jsonString(tc.name) + `", "kind": "regression"}]}`
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadDescription(path)
			switch {
			case tc.ok && err != nil:
				t.Fatal(err)
			case !tc.ok && (!errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "task 0: name")):
				t.Fatalf("error %v, want data.ErrInvalid naming task 0", err)
			}
		})
	}
}

// jsonString escapes s for a JSON string as far as the test needs:
// quotes, backslashes and control characters; other bytes go as they
// are.
func jsonString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// tasks.json holds one object: trailing text or a second object is
// refused, not ignored.
func TestDescriptionTrailing(t *testing.T) {
	one := `{"tasks": [{"name": "size", "kind": "regression"}]}`
	for _, tc := range []struct {
		content string
		ok      bool
	}{
		{one, true},
		{one + "\n \t\n", true},
		{one + "x", false},
		{one + one, false},
		{one + "\n[]", false},
	} {
		path := filepath.Join(t.TempDir(), TasksFile)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadDescription(path)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%q: %v", tc.content, err)
		case !tc.ok && (!errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "more after the JSON object")):
			t.Errorf("%q: %v, want data.ErrInvalid and trailing data named", tc.content, err)
		}
	}
}

// A UTF-8 byte-order mark (Excel's "CSV UTF-8", Notepad) is not part of
// the first column's name, nor of tasks.json: with one in train.csv
// only, or in every file, the data loads as without, and predict reads
// inputs with or without one.
func TestByteOrderMark(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	train := "a,digit,b,size,c\n1,0,2,0.5,3\n4,2,5,1.5,6\n7,1,8,2.5,9\n"
	valid := "c,size,b,digit,a\n3,0.5,2,0,1\n"
	test := "size,c,b,digit,a\n0.25,30,20,1,10\n"
	tasks := `{"tasks": [{"name": "digit", "kind": "classification", "classes": 3}, {"name": "size", "kind": "regression"}], "input": "none"}`
	for _, tc := range []struct {
		name string
		bom  []string // files that start with one
	}{
		{"none", nil},
		{"train.csv only", []string{"train.csv"}},
		{"test.csv only", []string{"test.csv"}},
		{"every file", []string{"train.csv", "valid.csv", "test.csv", TasksFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range map[string]string{"train.csv": train, "valid.csv": valid, "test.csv": test, TasksFile: tasks} {
				if slices.Contains(tc.bom, name) {
					content = bom + content
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := Load(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Spec.Columns, []string{"a", "b", "c"}) || d.Valid.Len() != 1 || d.Test.Len() != 1 {
				t.Fatalf("columns %q, %d validation and %d test examples", d.Spec.Columns, d.Valid.Len(), d.Test.Len())
			}
			x, y := make([]float32, 3), make([]float32, 2)
			if err := d.Train.Example(0, x, y); err != nil || !slices.Equal(x, []float32{1, 2, 3}) || !slices.Equal(y, []float32{0, 0.5}) {
				t.Errorf("train example 0: %v %v %v", x, y, err)
			}
			for _, prefix := range []string{"", bom} {
				path := filepath.Join(t.TempDir(), "new.csv")
				if err := os.WriteFile(path, []byte(prefix+"c,a,b\n3,1,2\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				in, err := OpenInputs(path, &d.Spec)
				if err != nil {
					t.Fatalf("predict's inputs, byte-order mark %v: %v", prefix != "", err)
				}
				s, err := in.Next(4)
				in.Close()
				if err != nil || s.Len() != 1 {
					t.Fatalf("predict's inputs, byte-order mark %v: %v", prefix != "", err)
				}
				if s.Example(0, x, y); !slices.Equal(x, []float32{1, 2, 3}) {
					t.Errorf("predict's inputs, byte-order mark %v: %v", prefix != "", x)
				}
			}
		})
	}
}

// A CSV file whose lines run past their bound is refused by name before
// memory grows with it: a 512 MB file with no newline (sparse, costing
// no disk) as the training split or predict's inputs, and a data line
// far longer than its header's columns need. The memory allocated
// meanwhile stays far under the file's size.
func TestCSVLineBound(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDescription(dir, twoTasks); err != nil {
		t.Fatal(err)
	}
	sparse := func(path string, prefix string, size int64) {
		t.Helper()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(prefix); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
	}
	train := filepath.Join(dir, "train.csv")
	spec := &Spec{Dir: dir, Shape: []int{2}, Tasks: twoTasks.Tasks, Columns: []string{"a", "b"}, Input: &Normalization{Kind: None}}
	for _, tc := range []struct {
		name    string
		prefix  string
		size    int64
		predict bool
		want    string
	}{
		{"no newline", "", 512 << 20, false, "train.csv: reading the header: line 1: longer than 16777216 bytes"},
		{"no newline, predict", "", 512 << 20, true, "line 1: longer than 16777216 bytes"},
		{"a long data line", "a,digit,b,size\n1,0,2,0.5\n", 1 << 20, false, "train.csv: line 3: longer than 1536 bytes"},
		{"a long data line, predict", "a,b\n1,2\n", 1 << 20, true, "line 3: longer than 1280 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sparse(train, tc.prefix, tc.size)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			var err error
			if tc.predict {
				var in *Inputs
				if in, err = OpenInputs(train, spec); err == nil {
					in.Close()
				}
			} else {
				_, err = Load(dir, Options{})
			}
			runtime.ReadMemStats(&after)
			if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), train) {
				t.Fatalf("error %v, want data.ErrInvalid naming %s and saying %q", err, train, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
				t.Errorf("%d MB allocated before the refusal", alloc>>20)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refused after %v", d)
			}
		})
	}
}

// A training CSV whose text could hold more numbers than half the
// memory is refused by its size, before it is read.
func TestCSVSizeBound(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDescription(dir, twoTasks); err != nil {
		t.Fatal(err)
	}
	content := "a,digit,b,size\n" + strings.Repeat("1,0,2,0.5\n", 30_000) // 300 kB
	if err := os.WriteFile(filepath.Join(dir, "train.csv"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.csv"), []byte("a,digit,b,size\n1,0,2,0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(sysmem.Env, "1M")
	_, err := Load(dir, Options{})
	if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "train.csv: ") {
		t.Fatalf("error %v, want data.ErrInvalid naming train.csv and its size", err)
	}
	t.Setenv(sysmem.Env, "2M")
	if _, err := Load(dir, Options{}); err != nil {
		t.Fatal(err)
	}
}

// A file of yours that is not regular (here a link to /dev/zero) is bad
// input, as a malformed one is: the commands exit 2 for it.
func TestNotRegularIsInvalid(t *testing.T) {
	dir := vectors(t, twoTasks, 10)
	zero := filepath.Join(t.TempDir(), "new.npz")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Skip(err)
	}
	for _, name := range []string{TrainFile, TasksFile, "predict"} {
		path := filepath.Join(dir, name)
		var err error
		if name == "predict" {
			path = zero
			_, err = OpenInputs(zero, &Spec{Dir: dir, Shape: []int{4}, Tasks: twoTasks.Tasks})
		} else {
			os.Rename(path, path+".bak")
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Skip(err)
			}
			_, err = Load(dir, Options{})
			os.Remove(path)
			os.Rename(path+".bak", path)
		}
		if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), path+": not a regular file but a character device") {
			t.Errorf("%s linked to /dev/zero: %v, want data.ErrInvalid naming it", name, err)
		}
	}
}
