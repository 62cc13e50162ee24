package testenv

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// EditJSON rewrites the JSON object in the file at path through edit,
// numbers kept exact (json.Number: 2⁶¹+1 is not a float64), to tamper
// with a checkpoint's manifest.
func EditJSON(t testing.TB, path string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// SetJSON sets the value at keys in a decoded JSON object: strings index
// objects, ints arrays.
func SetJSON(m map[string]any, v any, keys ...any) {
	var at any = m
	for _, k := range keys[:len(keys)-1] {
		switch k := k.(type) {
		case string:
			at = at.(map[string]any)[k]
		case int:
			at = at.([]any)[k]
		}
	}
	switch k := keys[len(keys)-1].(type) {
	case string:
		at.(map[string]any)[k] = v
	case int:
		at.([]any)[k] = v
	}
}

// CopyDir copies the files of the directory src (not its subdirectories)
// into dst, created, to tamper with a copy of a checkpoint.
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
