package main

import (
	"os"
	"testing"
)

// TestGeneratedFileCurrent fails when kernels_amd64.s is not what this
// program writes: the generator was changed and `go generate
// ./models/ops` not run, or the file was edited by hand.
func TestGeneratedFileCurrent(t *testing.T) {
	have, err := os.ReadFile("../../kernels_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != generate() {
		t.Error("models/ops/kernels_amd64.s is not what genkernels writes: run go generate ./models/ops")
	}
}
