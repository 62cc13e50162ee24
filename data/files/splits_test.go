package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
)

// A split's name that is there but cannot be opened is refused by name,
// not taken as no split: a dangling test split would have the validation
// split scored as the test split, a dangling validation split would hold
// out training examples.
func TestSplitThereButUnopenable(t *testing.T) {
	for _, name := range []string{"test.npz", "valid.npz", "test.csv", "valid.csv", "train.csv"} {
		t.Run(name, func(t *testing.T) {
			dir := vectors(t, twoTasks, 40)
			if strings.HasPrefix(name, "test") {
				os.Remove(filepath.Join(dir, TestFile))
			}
			path := filepath.Join(dir, name)
			if err := os.Symlink(filepath.Join(dir, "gone", name), path); err != nil {
				t.Skip(err)
			}
			_, err := Load(dir, Options{Valid: 10, Seed: 1})
			if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), path+" is there but cannot be opened") {
				t.Errorf("%s a dangling symlink: %v", name, err)
			}
		})
	}
}

// A CSV file in UTF-16, as R writes it with fileEncoding = "UTF-16LE"
// (with or without a byte-order mark) or big-endian, is refused as not
// UTF-8, naming the encoding, not as a quoting error.
func TestCSVUTF16(t *testing.T) {
	text := "x,kind\n1,dog\n2,cat\n3,dog\n4,cat\n"
	utf16 := func(bigEndian bool, mark bool) []byte {
		var b []byte
		if mark {
			if bigEndian {
				b = append(b, 0xFE, 0xFF)
			} else {
				b = append(b, 0xFF, 0xFE)
			}
		}
		for _, c := range []byte(text) {
			if bigEndian {
				b = append(b, 0, c)
			} else {
				b = append(b, c, 0)
			}
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"little-endian with a mark", utf16(false, true), "not UTF-8 (UTF-16 little-endian: its byte-order mark is FF FE)"},
		{"big-endian with a mark", utf16(true, true), "not UTF-8 (UTF-16 big-endian: its byte-order mark is FE FF)"},
		{"little-endian without", utf16(false, false), "not UTF-8 (UTF-16, by the NUL byte beside its first character)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteDescription(dir, Description{Tasks: []TaskSpec{{Name: "kind", Kind: "classification"}}}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "train.csv")
			if err := os.WriteFile(path, tc.content, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir, Options{Valid: 1, Seed: 1})
			if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), path+": "+tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// tasks.json's keys are case-sensitive: "Tasks", "Kind" or "Class_Names"
// would otherwise be taken for the fields, and a second key differing in
// case silently replace the first. The refusal names the file, the task
// and the spelling to write.
func TestDescriptionKeysCaseSensitive(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{`{"Tasks": [{"name": "a", "kind": "regression"}]}`, `key "Tasks": keys are case-sensitive; write "tasks"`},
		{`{"tasks": [{"name": "a", "Kind": "regression"}]}`, `task 0: key "Kind": keys are case-sensitive; write "kind"`},
		{`{"tasks": [{"name": "a", "kind": "classification", "Class_Names": ["x", "y"]}]}`, `task 0: key "Class_Names"`},
		{`{"tasks": [{"name": "a", "kind": "regression"}], "tasks ": []}`, `json: unknown field "tasks "`},
	} {
		path := filepath.Join(t.TempDir(), TasksFile)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadDescription(path)
		if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), path+": "+tc.want) {
			t.Errorf("%s: %v, want %q", tc.content, err, tc.want)
		}
	}
}
