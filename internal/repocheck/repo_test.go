package repocheck

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the directory holding go.mod, found by walking up from the
// test's working directory (the package's own).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// repoFile is one file of the repository.
type repoFile struct {
	rel string // slash-separated, relative to the root
	abs string
}

// isGo reports whether f is Go source the go command would build or test.
func (f repoFile) isGo() bool { return strings.HasSuffix(f.rel, ".go") }

// isTest reports whether f is a _test.go file.
func (f repoFile) isTest() bool { return strings.HasSuffix(f.rel, "_test.go") }

var (
	walkOnce  sync.Once
	walkFiles []repoFile
	walkErr   error
)

// repoFiles lists every file under the root but those in directories the
// go command ignores too: names starting with "." or "_", and testdata
// (fixtures, not the project's code or prose).
func repoFiles(t *testing.T) []repoFile {
	t.Helper()
	root := repoRoot(t)
	walkOnce.Do(func() {
		walkErr = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			walkFiles = append(walkFiles, repoFile{rel: filepath.ToSlash(rel), abs: path})
			return nil
		})
	})
	if walkErr != nil {
		t.Fatalf("walking %s: %v", root, walkErr)
	}
	return walkFiles
}

// generatedLine is Go's convention for a generated file
// (https://go.dev/s/generatedcode): a line of its own before the package
// clause.
var generatedLine = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// isGenerated reports whether Go source src was written by a program.
func isGenerated(src []byte) bool {
	head := src
	if bytes.HasPrefix(src, []byte("package ")) {
		head = nil
	} else if i := bytes.Index(src, []byte("\npackage ")); i >= 0 {
		head = src[:i]
	}
	return generatedLine.Match(head)
}
