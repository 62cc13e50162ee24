package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
)

// Class names follow the rule of task names but for commas, slashes and
// quotes: a NUL, CR, ESC, line or paragraph separator, or an empty or
// blank name would reach pred.csv and the terminal that shows it. Names
// from tasks.json's class_names and from a CSV file's string labels are
// refused by file, task and name; a comma or a quote is a class name
// (pred.csv quotes it).
func TestClassNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"cat", true},
		{"größe", true},
		{"two words", true},
		{"a,b", true},
		{`a"b`, true},
		{"a/b", true},
		{"a\x00b", false},
		{"a\rb", false},
		{"\x1b[31mred", false},
		{"a\u2028b", false},
		{"a\u2029b", false},
		{"a\tb", false},
		{"", false},
		{"  ", false},
		{" a", false},
	} {
		t.Run("class_names "+tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), TasksFile)
			content := `{"tasks": [{"name": "kind", "kind": "classification", "class_names": ["dog", "` + jsonString(tc.name) + `"]}]}`
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadDescription(path)
			switch {
			case tc.ok && err != nil:
				t.Fatal(err)
			case !tc.ok && (!errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), path+": task kind: class name ")):
				t.Fatalf("error %v, want data.ErrInvalid naming %s, task kind and the class name", err, path)
			}
		})
		if strings.TrimSpace(tc.name) == "" || strings.TrimSpace(tc.name) != tc.name {
			continue // a CSV cell is trimmed: blank is a missing label
		}
		t.Run("CSV label "+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteDescription(dir, Description{Tasks: []TaskSpec{{Name: "kind", Kind: "classification"}}}); err != nil {
				t.Fatal(err)
			}
			label := `"` + strings.ReplaceAll(tc.name, `"`, `""`) + `"`
			csv := "x,kind\n1,dog\n2," + label + "\n3,dog\n4," + label + "\n5,dog\n6,dog\n7,dog\n8,dog\n9,dog\n10,dog\n"
			path := filepath.Join(dir, "train.csv")
			if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := Load(dir, Options{Valid: 2, Seed: 1})
			switch {
			case tc.ok && err != nil:
				t.Fatal(err)
			case tc.ok && !strings.Contains(strings.Join(d.Train.Tasks()[0].ClassNames, "|"), tc.name):
				t.Errorf("classes %q, want %q among them", d.Train.Tasks()[0].ClassNames, tc.name)
			case !tc.ok && (!errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), path+`: column "kind": task kind's label: class name `)):
				t.Fatalf("error %v, want data.ErrInvalid naming %s, the column and the class name", err, path)
			}
		})
	}
}

// A spec, as a checkpoint records it, is checked as tasks.json is: an
// edited class name or task name is refused by task.
func TestSpecCheckTasks(t *testing.T) {
	good := Spec{Tasks: []TaskSpec{
		{Name: "kind", Kind: "classification", Classes: 2, ClassNames: []string{"cat", "dog"}},
		{Name: "size", Kind: "regression"},
	}}
	if err := good.CheckTasks(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(s *Spec)
		want string
	}{
		{func(s *Spec) { s.Tasks[0].ClassNames[1] = "d\x1b[2Jog" }, `files: task kind: class name "d\x1b[2Jog"`},
		{func(s *Spec) { s.Tasks[0].ClassNames[1] = "cat" }, `files: task kind: class name "cat" twice`},
		{func(s *Spec) { s.Tasks[1].Name = "a\u2028b" }, `files: task 1: name "a\u2028b"`},
		{func(s *Spec) { s.Tasks[1].Name = "kind" }, `files: task 1: name "kind" used twice`},
	} {
		s := good
		s.Tasks = []TaskSpec{good.Tasks[0], good.Tasks[1]}
		s.Tasks[0].ClassNames = []string{"cat", "dog"}
		tc.edit(&s)
		if err := s.CheckTasks(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
