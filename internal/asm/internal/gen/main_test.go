package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesCurrent fails when a generated file of package asm
// is not what this program writes: the program or a hand-written .s file
// was changed and `go generate ./internal/asm` not run, or a generated
// file was edited by hand.
func TestGeneratedFilesCurrent(t *testing.T) {
	const dir = "../.."
	files, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		have, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(have) != want {
			t.Errorf("internal/asm/%s is not what internal/asm/internal/gen writes: run go generate ./internal/asm", name)
		}
	}
}
