package main

import (
	"os"
	"testing"
)

// TestGeneratedFileCurrent fails when kernels_amd64.s or taps_amd64.go
// is not what this program writes: the generator was changed and `go
// generate ./models/ops` not run, or a file was edited by hand.
func TestGeneratedFileCurrent(t *testing.T) {
	for file, want := range map[string]string{
		"../../kernels_amd64.s": generate(),
		"../../taps_amd64.go":   declarations(),
	} {
		have, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(have) != want {
			t.Errorf("models/ops/%s is not what genkernels writes: run go generate ./models/ops", file[len("../../"):])
		}
	}
}
